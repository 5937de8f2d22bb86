// SPDX-License-Identifier: LGPL-2.1-or-later
// kmeans: Lloyd's k-means whose assignment step runs as one divisible job per iteration,
// under whatever policy STARPU_SCHED names:
//   STARPU_SCHED=plb-hac kmeans --generate 200000 --dims 4 -k 8 --verify --json runs.jsonl
#include <hetpu/hetpu.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/app_record.h"
#include "apps/common/divisible_workers.h"
#include "apps/common/pinned_host_memory.h"
#include "apps/common/run_output.h"
#include "apps/common/run_with_starpu.h"
#include "apps/kmeans/kmeans_checkpoint.h"
#include "apps/kmeans/kmeans_codelets.h"
#include "apps/kmeans/kmeans_data.h"
#include "apps/kmeans/kmeans_job.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "apps/kmeans/kmeans_options.h"

namespace {

using namespace hetpu::kmeans;
namespace apps = hetpu::apps;

struct Data {
    Points points;
    std::vector<double> truth;  // generated centres (empty for --input)
    std::string source;
};

// Returns 0, or 2 after printing the error (bad input).
int load(const Options &o, Data &data)
{
    std::string error;
    if (o.generate) {
        Blobs b = generate_blobs(o.generate, o.dims, o.blobs, o.sigma, o.seed);
        data.points = std::move(b.points);
        data.truth = std::move(b.centres);
        data.source = "--generate";
        if (!o.write_points_path.empty() && !write_points(o.write_points_path, data.points, error)) {
            std::fprintf(stderr, "kmeans: %s\n", error.c_str());
            return 2;
        }
        if (!o.truth_path.empty() && !write_matrix_csv(o.truth_path, data.truth, o.blobs, o.dims, "x", error)) {
            std::fprintf(stderr, "kmeans: %s\n", error.c_str());
            return 2;
        }
        return 0;
    }
    data.source = o.input;
    if (!read_points(o.input, data.points, error) || !check_k(o.k, data.points.n, o.input, error) ||
        !check_size(data.points.n, data.points.d, o.input, error)) {
        std::fprintf(stderr, "kmeans: %s\n", error.c_str());
        return 2;
    }
    return 0;
}

int run_all(const Options &o, const Data &data)
{
    const Points &p = data.points;
    // The points are copied to a GPU again at every pass (blocks move between passes):
    // page-locked, those copies overlap with the kernels.
    const apps::PinnedHostMemory pinned_points(p.x.data(), p.x.size() * sizeof(double));
    LloydSettings settings;
    settings.k = o.k;
    settings.max_iter = o.max_iter;
    settings.tol = o.tol;

    // On a multi-rank run (mpirun, srun) rank 0 gathers the results: it alone verifies and
    // reports; the other ranks run blocks and follow rank 0's iterations (see `pass`).
    const bool reporter = apps::reporting_rank();
    // Only the reporting rank writes the --json file.
    apps::RunOutput output("kmeans", reporter ? o.json_path : std::string());
    if (!output.open())
        return 1;
    // Checkpointing is refused with --reps > 1 (parse_options), so it spans the one repetition.
    const bool checkpointing = o.checkpoint_every > 0 || o.restart;
    RunCheckpoints checkpoints(o, fingerprint_of(p, o.k, o.seed));
    int status = checkpointing ? checkpoints.start() : 0;
    for (unsigned rep = 0; rep < o.reps && status == 0; ++rep) {
        PassTotals acc;
        // --restart: the newest checkpoint instead of k-means++. The restored state is all
        // run_lloyd carries between iterations except the previous pass's labels, so the first
        // pass after a restart counts every label as changed. That cannot change the result:
        // when no label changes, the sums of the next pass are those of the last one (same
        // points, same order), so the centroids do not move and shift2 == 0 <= the tolerance.
        // "converged" is therefore equivalent to "shift2 <= tolerance" and never depends on the
        // changed count (with fixed blocks; a planner whose blocks vary from pass to pass
        // rounds the sums differently anyway, restart or not).
        IterationState state;
        int64_t restarted_from = -1;
        if (o.restart) {
            if (checkpoints.restore(state) != 0) {
                status = 1;
                break;
            }
            restarted_from = state.iteration;
            if (reporter)
                std::printf("kmeans: restarted from the checkpoint of iteration %u in %s\n", state.iteration,
                            o.checkpoint_dir.c_str());
        } else {
            state = initial_state(p, o.k, o.seed);
        }
        AssignPass pass = [&](const std::vector<double> &c, std::vector<int32_t> &labels, std::vector<double> &totals) {
            int rc = assignment_pass(p, o.k, o.block, c, labels, totals, acc);
            // Only rank 0 holds every block's sums and labels. Every rank takes them, so all
            // compute the same centroids and take the same convergence decision (a rank
            // that stopped alone would leave the others waiting in the next job).
            if (rc == 0)
                rc = hetpu_mpi_bcast(totals.data(), totals.size() * sizeof(double));
            if (rc == 0)
                rc = hetpu_mpi_bcast(labels.data(), labels.size() * sizeof(int32_t));
            return rc;
        };
        IterationHook hook = checkpoints.hook();
        LloydResult result;
        const auto t0 = std::chrono::steady_clock::now();
        int rc = run_lloyd(p, settings, state, pass, hook, result);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rc != 0) {
            std::fprintf(stderr, "kmeans: repetition %u failed: %s\n", rep + 1, std::strerror(-rc));
            status = 1;
            break;
        }
        if (!reporter)
            continue;

        apps::Verified verified = apps::Verified::NotChecked;
        double ref_inertia = NAN;
        uint64_t label_mismatch = 0;
        if (o.verify) {
            IterationState ref;
            LloydResult ref_result;
            reference_kmeans(p, settings, o.seed, ref, ref_result);
            ref_inertia = ref.inertia;
            for (uint64_t i = 0; i < p.n; ++i)
                label_mismatch += ref_result.labels[i] != result.labels[i];
            const double rel = std::fabs(state.inertia - ref.inertia) / std::max(ref.inertia, 1e-300);
            const bool ok = rel <= 1e-9 && label_mismatch == 0 && ref.iteration == state.iteration;
            verified = ok ? apps::Verified::Passed : apps::Verified::Failed;
            if (!ok) {
                std::fprintf(stderr,
                             "kmeans: verification FAILED: inertia %.17g vs reference %.17g (relative %.3g), "
                             "%llu labels differ, iterations %u vs %u\n",
                             state.inertia, ref.inertia, rel, static_cast<unsigned long long>(label_mismatch),
                             state.iteration, ref.iteration);
                status = 1;
            }
        }
        const double centre_error = data.truth.empty() ? NAN : centre_recovery_error(state.centroids, data.truth, p.d);

        apps::AppRecord r = apps::record_of("kmeans", acc, rep, verified);
        // Assignment: 3 flops per dimension per centroid per point, per pass.
        r.gflops = acc.makespan_s > 0 ? 3.0 * p.n * o.k * p.d * result.passes / acc.makespan_s * 1e-9 : 0;
        r.extra = {{"n", p.n},
                   {"d", p.d},
                   {"k", o.k},
                   {"iterations", state.iteration},
                   {"passes", result.passes},
                   {"converged", state.converged},
                   {"inertia", state.inertia},
                   {"reference_inertia", ref_inertia},
                   {"centre_error", centre_error},
                   {"wall_s", wall},
                   {"checkpoints", checkpoints.checkpoints_taken()},
                   // iteration of the restored checkpoint, null for a fresh start
                   {"restarted_from", restarted_from >= 0 ? hetpu::JsonRecord(restarted_from) : hetpu::JsonRecord()}};
        std::printf("kmeans rep %u/%u: policy %s, %llu points x %u dims, k = %u, %s\n"
                    "  %u iterations (%s), %u passes, inertia %.10g, time in jobs %.6f s (wall %.6f s)\n",
                    rep + 1, o.reps, r.policy.c_str(), static_cast<unsigned long long>(p.n), p.d, o.k,
                    r.block ? ("fixed blocks of " + std::to_string(r.block) + " points").c_str()
                            : ("blocks chosen by " + r.planner).c_str(),
                    state.iteration, state.converged ? "converged" : "iteration limit", result.passes, state.inertia,
                    acc.makespan_s, wall);
        if (o.verify)
            std::printf("  reference inertia %.10g, labels differing %llu, verified: %s\n", ref_inertia,
                        static_cast<unsigned long long>(label_mismatch),
                        verified == apps::Verified::Passed ? "yes" : "NO");
        if (!data.truth.empty())
            std::printf("  largest distance from a true centre to its nearest centroid: %.4g\n", centre_error);
        std::fputs(apps::worker_lines(r, "points").c_str(), stdout);
        output.add(apps::json_line(r));
        if (rep + 1 == o.reps) {
            std::string error;
            if (!o.centroids_path.empty() &&
                !write_matrix_csv(o.centroids_path, state.centroids, o.k, p.d, "x", error)) {
                std::fprintf(stderr, "kmeans: %s\n", error.c_str());
                status = 1;
            }
            if (!o.assignments_path.empty() && !write_labels(o.assignments_path, result.labels, error)) {
                std::fprintf(stderr, "kmeans: %s\n", error.c_str());
                status = 1;
            }
        }
    }
    // The last checkpoints reach the directory before StarPU stops.
    if (checkpoints.finish() != 0)
        status = 1;
    if (output.close() != 0)
        status = 1;
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    return apps::run_data_app("kmeans", argc, argv, parse_options, usage, load, codelets_init, codelets_shutdown,
                              run_all);
}
