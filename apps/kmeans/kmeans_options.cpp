// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_options.h"

namespace hetpu::kmeans {

namespace {

void describe(CLI::App &app, Options &o)
{
    app.description("Lloyd's k-means with k-means++ initialisation; each iteration's assignment step is one job "
                    "divided among the processing units by hetpu (policy from STARPU_SCHED). Without --input it "
                    "clusters " +
                    std::to_string(kDefaultPoints) + " generated points into " + std::to_string(kDefaultK) +
                    " clusters.");
    app.add_option("-k", o.k,
                   "number of clusters (1 <= K <= number of points; default " + std::to_string(kDefaultK) + ")")
        ->type_name("K")
        ->check(apps::whole_in(1, 1u << 20));
    app.add_option("--input", o.input,
                   "points, one per line (CSV, TSV or blank separated, optional header, '#' comments), or hetpu's "
                   "binary format (see README)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--generate", o.generate,
                   "N points in Gaussian blobs with known centres (default " + std::to_string(kDefaultPoints) +
                       " without --input)")
        ->type_name("N")
        ->check(apps::whole_in(1, uint64_t{1} << 34));
    app.add_option("--dims", o.dims, "dimensions of generated points")
        ->type_name("D")
        ->capture_default_str()
        ->check(apps::whole_in(1, 4096));
    app.add_option("--blobs", o.blobs, "blobs of generated points (default K)")
        ->type_name("B")
        ->check(apps::whole_in(1, 1u << 20));
    app.add_option("--sigma", o.sigma, "standard deviation of each blob (centres in [-50,50])")
        ->type_name("S")
        ->capture_default_str()
        ->check(apps::finite_real([](double v) { return v > 0; }, "a positive number such as 0.5"));
    app.add_option("--max-iter", o.max_iter, "most centroid updates")
        ->type_name("I")
        ->capture_default_str()
        ->check(apps::whole_in(0, 1000000));
    app.add_option("--tol", o.tol, "stop when centroids move less than T x mean variance")
        ->type_name("T")
        ->capture_default_str()
        ->check(apps::finite_real([](double v) { return v >= 0; }, "a number >= 0 such as 1e-6"));
    apps::add_run_options(app, o, "points", UINT64_MAX, "the serial reference (inertia and labels)");
    app.add_option("--centroids", o.centroids_path, "write the centroids (CSV)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--assignments", o.assignments_path, "write the cluster of every point (one per line)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--max-points-mib", o.max_points_mib,
                   "MiB of points one process may hold (default 0: no limit); on several MPI ranks each holds only "
                   "its share (read from a binary file or generated)")
        ->type_name("MIB")
        ->check(apps::whole_in(0, uint64_t{1} << 40));
    app.add_option("--write-points", o.write_points_path, "save the generated points (.bin: binary, otherwise CSV)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--truth", o.truth_path, "save the generated blob centres (CSV)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    apps::add_checkpoint_options(app, o.checkpoint_every, o.checkpoint_dir, o.restart,
                                 "save the iteration state every K iterations into --checkpoint-dir (asynchronous, "
                                 "through hetpu's checkpoint backend)",
                                 "continue from the newest checkpoint in --checkpoint-dir (same -k, --seed and data; "
                                 "an error if there is none)");
    app.footer("Example: STARPU_SCHED=plb-hac hetpu-kmeans --generate 200000 --dims 4 -k 8 --verify");
}

}  // namespace

bool check_size(uint64_t n, uint32_t d, const std::string &source, std::string &error)
{
    if (n * d > UINT32_MAX) {
        error = source + ": " + std::to_string(n) + " points x " + std::to_string(d) +
                " dimensions exceed the 4294967295 values StarPU 1.3 can hold in one buffer: use fewer points";
        return false;
    }
    return true;
}

bool check_k(uint32_t k, uint64_t n, const std::string &source, std::string &error)
{
    if (k > n) {
        error = "k = " + std::to_string(k) + " is larger than the " + std::to_string(n) + " points of " + source +
                ": give -k " + std::to_string(n) + " or fewer clusters";
        return false;
    }
    return true;
}

namespace {

// Defaults that depend on other options, and the checks across options.
bool complete(Options &o, std::string &error)
{
    if (o.k == 0)
        o.k = kDefaultK;
    if (!apps::choose_data(o.input, o.generate, kDefaultPoints, error))
        return false;
    if (o.generate &&
        (!check_k(o.k, o.generate, "--generate", error) || !check_size(o.generate, o.dims, "--generate", error)))
        return false;
    if (!o.generate && (!o.write_points_path.empty() || !o.truth_path.empty())) {
        error = "--write-points and --truth describe generated data: use them with --generate";
        return false;
    }
    if (!apps::check_checkpoint_flags(o.checkpoint_every, o.checkpoint_dir, o.restart, error))
        return false;
    // Versions are numbered by iteration: repetitions would take the same numbers again.
    if ((o.checkpoint_every > 0 || o.restart) && o.reps > 1) {
        error = "--checkpoint-every and --restart work on a single run: drop --reps";
        return false;
    }
    if (o.blobs == 0)
        o.blobs = o.k;
    if (o.generate && o.blobs > o.generate) {
        error = "--blobs " + std::to_string(o.blobs) + " is larger than --generate " + std::to_string(o.generate) +
                ": give fewer blobs";
        return false;
    }
    return true;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    return apps::parse_into(describe, complete, argc, argv, out, error);
}

std::string usage(const char *prog) { return apps::help_text(describe, prog, "hetpu-kmeans"); }

}  // namespace hetpu::kmeans
