// SPDX-License-Identifier: LGPL-2.1-or-later
// kmeans: Lloyd's k-means whose assignment step runs as one divisible job per iteration,
// under whatever policy STARPU_SCHED names:
//   STARPU_SCHED=plb-hac kmeans --generate 200000 --dims 4 -k 8 --verify --json runs.jsonl
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/app_record.h"
#include "apps/common/divisible_workers.h"
#include "apps/common/pinned_host_memory.h"
#include "apps/common/rank_reports.h"
#include "apps/common/run_output.h"
#include "apps/common/run_with_starpu.h"
#include "apps/kmeans/kmeans_checkpoint.h"
#include "apps/kmeans/kmeans_codelets.h"
#include "apps/kmeans/kmeans_data.h"
#include "apps/kmeans/kmeans_job.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "apps/kmeans/kmeans_mpi_collective.h"
#include "apps/kmeans/kmeans_options.h"

namespace {

using namespace hetpu::kmeans;
namespace apps = hetpu::apps;

struct Data {
    Points points;              // all of them, or (launched by MPI) none until this rank's share is known
    std::vector<double> truth;  // generated centres (empty for --input)
    std::string source;
    bool deferred = false;  // an MPI launch: each rank reads or generates its share once StarPU runs
    uint64_t n = 0;         // points in all
    uint32_t d = 0;
};

bool write_generated(const Options &o, const Points &all, const std::vector<double> &centres)
{
    std::string error;
    if (!o.write_points_path.empty() && !write_points(o.write_points_path, all, error)) {
        std::fprintf(stderr, "kmeans: %s\n", error.c_str());
        return false;
    }
    if (!o.truth_path.empty() && !write_matrix_csv(o.truth_path, centres, o.blobs, o.dims, "x", error)) {
        std::fprintf(stderr, "kmeans: %s\n", error.c_str());
        return false;
    }
    return true;
}

// --max-points-mib: whether `count` points of d dimensions may be held here (else says so).
bool within_limit(const Options &o, uint64_t count, uint32_t d, const char *whose)
{
    const uint64_t bytes = count * d * sizeof(double);
    if (o.max_points_mib == 0 || bytes <= (o.max_points_mib << 20))
        return true;
    std::fprintf(stderr,
                 "kmeans: %s %llu points take %.1f MiB, more than --max-points-mib %llu: run on more MPI ranks (each "
                 "holds only its share), or raise the limit\n",
                 whose, static_cast<unsigned long long>(count), static_cast<double>(bytes) / (1 << 20),
                 static_cast<unsigned long long>(o.max_points_mib));
    return false;
}

// Returns 0, or 2 after printing the error (bad input). Under an MPI launcher the points
// are only checked here (the size of a file, every value of a text file): each rank reads
// or generates just its share once the ranks have agreed on the shares (load_share).
int load(const Options &o, Data &data)
{
    std::string error;
    data.deferred = hetpu_mpi_launched() != 0;
    if (o.generate) {
        data.n = o.generate;
        data.d = o.dims;
        data.source = "--generate";
        Blobs b = generate_blobs(o.generate, o.dims, o.blobs, o.sigma, o.seed, 0, data.deferred ? 0 : o.generate);
        data.truth = std::move(b.centres);
        if (data.deferred)
            return 0;  // rank 0 writes --write-points / --truth once it knows it is rank 0
        if (!within_limit(o, o.generate, o.dims, "the"))
            return 2;
        data.points = std::move(b.points);
        return write_generated(o, data.points, data.truth) ? 0 : 2;
    }
    data.source = o.input;
    if (data.deferred) {
        // Every rank reads its own share of its own copy: the job check compares the files.
        if (!scan_points(o.input, data.n, data.d, error) || !check_k(o.k, data.n, o.input, error) ||
            !check_size(data.n, data.d, o.input, error) || !apps::remember_input_fingerprint(o.input, error)) {
            std::fprintf(stderr, "kmeans: %s\n", error.c_str());
            return 2;
        }
        return 0;
    }
    if (!read_points(o.input, data.points, error) || !check_k(o.k, data.points.n, o.input, error) ||
        !check_size(data.points.n, data.points.d, o.input, error)) {
        std::fprintf(stderr, "kmeans: %s\n", error.c_str());
        return 2;
    }
    if (!within_limit(o, data.points.n, data.points.d, "the"))
        return 2;
    data.n = data.points.n;
    data.d = data.points.d;
    return 0;
}

// This rank's points: all of them in a single process, else the share hetpu_mpi_share()
// gives it (all of them under the central planner). Collective; 0 on every rank, or 1 on
// every rank after the failing ranks printed why.
int load_share(const Options &o, const Data &data, Points &mine, uint64_t &offset)
{
    offset = 0;
    if (!data.deferred)
        return 0;
    struct hetpu_divisible_job shape = pass_job_shape(data.n);
    uint64_t count = 0;
    if (int rc = hetpu_mpi_share(&shape, &offset, &count); rc != 0) {
        std::fprintf(stderr, "kmeans: cannot share the points among the ranks: %s\n", std::strerror(-rc));
        return 1;
    }
    const std::string whose = "rank " + std::to_string(hetpu_mpi_rank()) + "'s";
    bool ok = within_limit(o, count, data.d, whose.c_str());
    try {
        if (ok && o.generate) {
            mine = generate_blobs(data.n, data.d, o.blobs, o.sigma, o.seed, offset, count).points;
            if (hetpu_mpi_rank() == 0 && (!o.write_points_path.empty() || !o.truth_path.empty()))
                ok = write_generated(o, generate_blobs(data.n, data.d, o.blobs, o.sigma, o.seed).points, data.truth);
        } else if (ok) {
            std::string error;
            ok = read_points_share(o.input, offset, count, mine, error) && mine.n == count && mine.d == data.d;
            if (!ok)
                std::fprintf(stderr, "kmeans: rank %d: %s\n", hetpu_mpi_rank(),
                             error.empty() ? (o.input + ": changed while the run started").c_str() : error.c_str());
        }
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "kmeans: rank %d: not enough memory for its %llu points: use more ranks or fewer points\n",
                     hetpu_mpi_rank(), static_cast<unsigned long long>(count));
        ok = false;
    }
    // No rank goes on alone: the others would wait for it in the first exchange.
    return hetpu_mpi_min(ok ? 1 : 0) ? 0 : 1;
}

// Every rank's labels in point order (the shares tile the points in rank order).
std::vector<int32_t> all_labels(Collective &comm, const std::vector<int32_t> &mine, uint64_t total)
{
    std::vector<uint64_t> counts;
    comm.gather_values(static_cast<uint64_t>(mine.size()), counts);
    const uint64_t most = *std::max_element(counts.begin(), counts.end());
    std::vector<int32_t> padded(mine);
    padded.resize(most, -1);
    std::vector<unsigned char> bytes;
    comm.all_gather(padded.data(), most * sizeof(int32_t), bytes);
    std::vector<int32_t> all;
    all.reserve(total);
    for (size_t r = 0; r < counts.size(); ++r) {
        const auto *at = reinterpret_cast<const int32_t *>(bytes.data()) + r * most;
        all.insert(all.end(), at, at + counts[r]);
    }
    return all;
}

struct Verification {
    apps::Verified verified = apps::Verified::NotChecked;
    double ref_inertia = NAN;
    uint64_t label_mismatch = 0;
};

// The run's result against the reference k-means over the same shares (every rank holding a
// share takes part); the reporter says what differs.
Verification verify_run(const PointShare &share, const Points &p, const LloydSettings &settings, uint64_t seed,
                        const IterationState &state, const LloydResult &result, Collective &comm, bool reporter)
{
    Verification v;
    IterationState ref;
    LloydResult ref_result;
    reference_kmeans(share, settings, seed, ref, ref_result, comm);
    v.ref_inertia = ref.inertia;
    std::vector<double> mismatch(1, 0.0);
    for (uint64_t i = 0; i < p.n; ++i)
        mismatch[0] += ref_result.labels[i] != result.labels[i];
    comm.sum(mismatch);
    v.label_mismatch = static_cast<uint64_t>(mismatch[0]);
    const double rel = std::fabs(state.inertia - ref.inertia) / std::max(ref.inertia, 1e-300);
    const bool ok = rel <= 1e-9 && v.label_mismatch == 0 && ref.iteration == state.iteration;
    v.verified = ok ? apps::Verified::Passed : apps::Verified::Failed;
    if (!ok && reporter)
        std::fprintf(stderr,
                     "kmeans: verification FAILED: inertia %.17g vs reference %.17g (relative %.3g), "
                     "%llu labels differ, iterations %u vs %u\n",
                     state.inertia, ref.inertia, rel, static_cast<unsigned long long>(v.label_mismatch),
                     state.iteration, ref.iteration);
    return v;
}

// --centroids and --assignments (when `labels`): nonzero, after saying why, when a file
// cannot be written.
int write_results(const Options &o, const std::vector<double> &centroids, uint32_t d,
                  const std::vector<int32_t> *labels)
{
    int status = 0;
    std::string error;
    if (!o.centroids_path.empty() && !write_matrix_csv(o.centroids_path, centroids, o.k, d, "x", error)) {
        std::fprintf(stderr, "kmeans: %s\n", error.c_str());
        status = 1;
    }
    if (labels && !write_labels(o.assignments_path, *labels, error)) {
        std::fprintf(stderr, "kmeans: %s\n", error.c_str());
        status = 1;
    }
    return status;
}

int run_all(const Options &o, const Data &data)
{
    Points share_points;
    uint64_t offset = 0;
    if (load_share(o, data, share_points, offset) != 0)
        return 1;
    const Points &p = data.deferred ? share_points : data.points;
    const PointShare share{p, offset, data.n};
    // The points are copied to a GPU again at every pass (blocks move between passes):
    // page-locked, those copies overlap with the kernels.
    const apps::PinnedHostMemory pinned_points(p.x.data(), p.x.size() * sizeof(double));
    LloydSettings settings;
    settings.k = o.k;
    settings.max_iter = o.max_iter;
    settings.tol = o.tol;

    // Several ranks holding shares sum their totals and counts in every exchange (comm);
    // under the central planner every rank holds all points, rank 0 gathers every block's
    // results and every rank takes rank 0's (see `pass`).
    SingleProcess single;
    MpiCollective mpi;
    const bool split = hetpu_mpi_size() > 1 && hetpu_mpi_min(offset == 0 && p.n == data.n ? 1 : 0) == 0;
    Collective &comm = split ? static_cast<Collective &>(mpi) : single;
    // Only rank 0 reports and writes the --json file.
    const bool reporter = apps::reporting_rank();
    apps::RunOutput output("kmeans", reporter ? o.json_path : std::string());
    if (!output.open())
        return 1;
    InputFingerprint fingerprint;
    if (fingerprint_of(share, o.k, o.seed, comm, fingerprint) != 0)
        return 1;
    // Checkpointing is refused with --reps > 1 (parse_options), so it spans the one repetition.
    const bool checkpointing = o.checkpoint_every > 0 || o.restart;
    RunCheckpoints checkpoints(o, fingerprint);
    int status = checkpointing ? checkpoints.start() : 0;
    for (unsigned rep = 0; rep < o.reps && status == 0; ++rep) {
        PassTotals acc;
        const apps::AppBytes exchanged = apps::app_bytes_now();
        // --restart: the newest checkpoint instead of k-means++. The restored state is all
        // run_lloyd carries between iterations except the previous pass's labels, so the first
        // pass after a restart counts every label as changed. That cannot change the result:
        // when no label changes, the sums of the next pass are those of the last one (same
        // points, same order), so the centroids do not move and shift2 == 0 <= the tolerance.
        // "converged" is therefore equivalent to "shift2 <= tolerance" and never depends on the
        // changed count (with fixed blocks; a planner whose blocks vary from pass to pass
        // rounds the sums differently anyway, restart or not).
        IterationState state;
        const apps::LosingCopiesEndFirst copies_end;  // they read the centroids and the points
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
        } else if (initial_state(share, o.k, o.seed, comm, state) != 0) {
            status = 1;
            break;
        }
        AssignPass pass = [&](const std::vector<double> &c, std::vector<int32_t> &labels, std::vector<double> &totals) {
            int rc = assignment_pass(share, o.k, o.block, c, labels, totals, acc);
            if (split || hetpu_mpi_size() == 1)
                return rc;
            // Central planner: only rank 0 holds every block's sums and labels. Every rank
            // takes them, so all compute the same centroids and take the same convergence
            // decision (a rank that stopped alone would leave the others waiting).
            if (rc == 0)
                rc = hetpu_mpi_bcast(totals.data(), totals.size() * sizeof(double));
            if (rc == 0)
                rc = hetpu_mpi_bcast(labels.data(), labels.size() * sizeof(int32_t));
            return rc;
        };
        IterationHook hook = checkpoints.hook();
        LloydResult result;
        const auto t0 = std::chrono::steady_clock::now();
        int rc = run_lloyd(share, settings, state, pass, hook, result, comm);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rc != 0) {
            std::fprintf(stderr, "kmeans: repetition %u failed: %s\n", rep + 1, std::strerror(-rc));
            status = 1;
            break;
        }

        // The reference runs over the same shares (split: every rank takes part; otherwise
        // rank 0 alone, over all the points).
        Verification check;
        if (o.verify && (split || reporter)) {
            check = verify_run(share, p, settings, o.seed, state, result, comm, reporter);
            if (check.verified == apps::Verified::Failed && reporter)
                status = 1;
        }
        const apps::Verified verified = check.verified;
        const double ref_inertia = check.ref_inertia;
        const uint64_t label_mismatch = check.label_mismatch;
        const bool write_assignments = rep + 1 == o.reps && !o.assignments_path.empty();
        const std::vector<int32_t> labels_all =
            write_assignments && split ? all_labels(comm, result.labels, data.n) : std::vector<int32_t>();
        if (apps::add_app_bytes(acc.mpi, exchanged) != 0) {
            status = 1;
            break;
        }
        if (!reporter)
            continue;
        const double centre_error = data.truth.empty() ? NAN : centre_recovery_error(state.centroids, data.truth, p.d);

        apps::AppRecord r = apps::record_of("kmeans", acc, rep, verified);
        // Assignment: 3 flops per dimension per centroid per point, per pass.
        r.gflops = acc.makespan_s > 0 ? 3.0 * data.n * o.k * p.d * result.passes / acc.makespan_s * 1e-9 : 0;
        r.extra = {{"n", data.n},
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
                    rep + 1, o.reps, r.policy.c_str(), static_cast<unsigned long long>(data.n), p.d, o.k,
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
        if (rep + 1 == o.reps &&
            write_results(o, state.centroids, p.d, write_assignments ? &(split ? labels_all : result.labels) : nullptr))
            status = 1;
    }
    // The last checkpoints reach the directory before StarPU stops.
    if (checkpoints.finish() != 0)
        status = 1;
    return output.finish(status);
}

}  // namespace

int main(int argc, char **argv)
{
    return apps::run_data_app("kmeans", argc, argv, parse_options, usage, load, codelets_init, codelets_shutdown,
                              run_all);
}
