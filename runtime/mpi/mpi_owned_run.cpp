// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-node multi-rank runner (HETPU_MPI_PLANNER=per-node): data owned by the ranks
// that use them, a planner per rank, one coordinator on rank 0 that only re-shares.
//
// Every rank runs its share as a single process would (runtime/divisible/block_run.h: its own
// planner, dispatcher and completion callbacks), and its main thread (runtime/mpi/owned_rank.h)
// reports node-level progress to the coordinator and carries out re-sharing moves: the
// lender (owned_lender.h) sends a range's inputs directly to the borrower (owned_borrower.h),
// which runs it and sends its results directly back. The coordinator (owned_coordinator.h,
// rank 0's main thread, beside its own rank's work) decides with the pure cores
// runtime/mpi/core/share_coordinator.h and node_shares.h, and ends the job when every rank
// is idle and no move is under way. This file starts the run: the shares, each rank's
// planner, and the report at the end.
#include "runtime/mpi/mpi_owned_run.h"

#ifdef HETPU_HAVE_MPI

#include <hetpu/hetpu.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/divisible/block_run.h"
#include "runtime/mpi/core/coordinator_cadence.h"
#include "runtime/divisible/run_copies.h"
#include "runtime/mpi/core/node_shares.h"
#include "runtime/mpi/core/progress_reports.h"
#include "runtime/mpi/mpi_link_probe.h"
#include "runtime/mpi/mpi_rank_report.h"
#include "runtime/mpi/mpi_state.h"
#include "runtime/mpi/node_rates.h"
#include "runtime/mpi/owned_rank.h"
#include "runtime/mpi/rank_watch.h"
#include "runtime/start/starpu_start.h"

namespace hetpu {
namespace {

struct WireNode {
    int32_t pus;
    int32_t pad;
    double rate;           // elements per second this rank sustained on this job last time (0: unknown)
    uint64_t held_offset;  // the share the rank already holds (placement), count 0: none
    uint64_t held_count;
};

}  // namespace

int start_shares(const hetpu_divisible_job &job, const hetpu_divisible_placement *placement, const BlockRules &rules,
                 const std::vector<PlannerWorker> &local, const char *label, std::vector<NodeState> &nodes,
                 std::vector<Block> &shares, bool &held)
{
    const int rank = mpi_rank(), size = mpi_size();
    // Every rank's speed on this job last time (else its PU count) and what it holds.
    WireNode mine{static_cast<int32_t>(local.size()), 0, job.name ? load_node_rate(node_rate_key(job, local)) : 0.0,
                  placement ? placement->held_offset : 0, placement ? placement->held_count : 0};
    std::vector<WireNode> all(static_cast<size_t>(size));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, mpi_control_comm());
    nodes.assign(static_cast<size_t>(size), NodeState{});
    std::vector<Block> held_shares(static_cast<size_t>(size));
    unsigned total_pus = 0;
    held = false;
    for (int r = 0; r < size; ++r) {
        const WireNode &w = all[static_cast<size_t>(r)];
        nodes[static_cast<size_t>(r)].rank = r;
        nodes[static_cast<size_t>(r)].pus = static_cast<unsigned>(w.pus);
        nodes[static_cast<size_t>(r)].rate = w.rate;
        total_pus += nodes[static_cast<size_t>(r)].pus;
        held_shares[static_cast<size_t>(r)] = {w.held_offset, w.held_count};
        held = held || w.held_count > 0;
    }
    if (total_pus == 0) {
        if (rank == 0)
            std::fprintf(stderr, "hetpu: %s: no worker of any rank can run the job's codelet\n", label);
        return -ENODEV;
    }
    if (held) {
        // Every rank sees the same figures, so every rank refuses together.
        const std::string error = held_shares_error(rules, held_shares);
        if (!error.empty()) {
            if (rank == 0)
                std::fprintf(stderr,
                             "hetpu: %s: the shares the ranks hold do not cover the job: %s (pass each rank the "
                             "share hetpu_mpi_share() gave it, or report.share_offset/share_count of a job over the "
                             "same data)\n",
                             label, error.c_str());
            return -EINVAL;
        }
        shares = held_shares;
        return 0;
    }
    // Every rank computes the same shares from the same figures: nothing to broadcast.
    shares = initial_shares(rules, nodes);
    return 0;
}

int run_per_node(const hetpu_divisible_job &job, const hetpu_divisible_placement &placement,
                 hetpu_divisible_report *report, const BlockRules &rules, const std::vector<PlannerWorker> &local,
                 const char *label)
{
    const int rank = mpi_rank(), size = mpi_size();
    MPI_Comm comm = mpi_control_comm();

    // 1. The coordinator's shares (or those the ranks already hold).
    std::vector<NodeState> nodes;
    std::vector<Block> shares;
    bool held = false;
    const double shares_t0 = starpu_timing_now();
    if (int rc = start_shares(job, &placement, rules, local, label, nodes, shares, held); rc != 0)
        return rc;
    const double shares_s = (starpu_timing_now() - shares_t0) * 1e-6;
    const Block share = shares[static_cast<size_t>(rank)];
    const std::string rate_key = node_rate_key(job, local);

    // 2. Each rank holds its share (allocates it, reads or generates its inputs).
    int rc = share.count > 0 && placement.hold && !held
                 ? placement.hold(placement.arg, share.offset, share.count, HETPU_HOLD_SHARE)
                 : 0;
    if (rc != 0)
        std::fprintf(stderr, "hetpu: %s: rank %d cannot hold its share [%llu, %llu): %s\n", label, rank,
                     (unsigned long long)share.offset, (unsigned long long)(share.offset + share.count),
                     std::strerror(rc < 0 ? -rc : rc));
    // 3. Its planner, over its own workers and its share.
    bool opted_in = false;
    if (rc == 0)
        rc = job_backup_hooks(job, label, opted_in);
    std::shared_ptr<Run> run_ptr = make_run(job);
    Run &run = *run_ptr;
    run.track_homes = true;
    uint64_t fixed_block = 0;
    if (rc == 0 && !local.empty()) {
        BlockRules node_rules = rules;
        // A planner plans its own share (plb-hac's steps and tail follow it). Fixed blocks
        // keep the job's size rules: HETPU_BLOCK may exceed a share.
        const RegisteredPolicy *policy = running_hetpu_policy();
        if (policy && policy->make_planner && share.count >= rules.min_block)
            node_rules.total = share.count;
        rc = make_job_planner(job, local, node_rules, label, run.planner, fixed_block);
    }
    if (rc == 0 && !run.planner)
        run.planner = std::make_unique<FixedBlockPlanner>(rules.min_block);  // no worker: never asked
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm);
    if (worst != 0) {
        if (rc == 0 && rank == 0)
            std::fprintf(stderr, "hetpu: %s: another rank could not start the job (its message says why)\n", label);
        return worst;
    }
    std::vector<int> ids;
    for (const PlannerWorker &w : local)
        ids.push_back(w.id);
    run.dispatcher = std::make_unique<BlockDispatcher>(rules, *run.planner, ids, share);
    choose_copies(run, opted_in, true);
    note_units_busy_with_copies(run);

    // Every link measured before any data moves, so the first moves are priced right.
    const ProbedLinks probed = size > 1 ? probe_links(comm) : ProbedLinks{};
    const std::vector<NodeLink> &links = probed.links;
    PerNodeRank node(job, placement, run, comm, share, ids);
    if (rank == 0) {
        NodeNetwork network;
        network.links = links;
        network.bytes_per_element = static_cast<double>(placement.bytes_per_element);
        network.min_gain_s = 2 * report_period(1e9, size);  // two reports at the steady cadence
        for (int r = 0; r < size; ++r)
            nodes[static_cast<size_t>(r)].remaining = shares[static_cast<size_t>(r)].count;
        node.make_coordinator(nodes, network);
    }
    RankWatch watch(comm, label, node.traffic_counts());
    node.watch(&watch);
    MPI_Barrier(comm);  // every rank starts together: the makespan is the job's
    const double t0 = start_run(run);
    watch.begin();
    const int status = node.loop();
    {
        std::unique_lock<std::mutex> lock(run.mutex);
        const uint64_t done = run.elements_done;
        const double longest = run.longest_block_s;
        lock.unlock();
        watch.finish(done, longest);
    }
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;
    const RunCopies copies = close_run(run);
    if (status == 0 && job.name && node.busy_s() > 0)
        save_node_rate(rate_key, static_cast<double>(run.elements_done) / node.busy_s());

    // 4. The report: every rank's workers and figures, on rank 0.
    std::vector<ClusterPu> mine_pus;
    for (const PlannerWorker &w : local)
        mine_pus.push_back({rank, w.id, w.kind, w.name, hetpu_host_name()});
    std::vector<WorkerTotals> mine_totals;
    for (const PlannerWorker &w : local) {
        mine_totals.push_back(run.totals[static_cast<size_t>(w.id)]);
        mine_totals.back().copies = copies.copies_of(w.id);
        mine_totals.back().lost_s = copies.lost_s_of(w.id);
    }
    std::vector<ClusterPu> pus;
    std::vector<WorkerTotals> totals;
    gather_workers(comm, mine_pus, mine_totals, pus, totals);
    if (report) {
        fill_report_header(*report, run, makespan_s, fixed_block, size);
        std::snprintf(report->mpi_planner, sizeof report->mpi_planner, "per-node");
        report->share_offset = share.offset;
        report->share_count = share.count;
        report->moves = node.moves();
        report->coordinator_s = node.coordinator_s();
        report->shares_s = shares_s;
        if (rank == 0) {
            report->elements = 0;
            report->blocks = 0;
            for (size_t g = 0; g < pus.size(); ++g) {
                report->elements += totals[g].elements;
                report->blocks += totals[g].blocks;
            }
            add_worker_reports(*report, pus, totals);
        }
    }
    if (report)
        fill_report_copies(*report, copies);
    RankTraffic traffic = node.traffic();
    traffic.control_sent += probed.bytes_sent;
    traffic.control_received += probed.bytes_received;
    gather_rank_reports(comm, share.offset, share.count, run.elements_done, traffic, report);
    add_silences(watch, report);
    for (unsigned i = 0; report && i < report->nrank_reports; ++i) {
        hetpu_rank_report &r = report->rank_reports[i];
        if (r.rank >= 0 && static_cast<size_t>(r.rank) < links.size()) {
            r.link_latency_s = links[static_cast<size_t>(r.rank)].latency_s;
            r.link_bytes_per_s = links[static_cast<size_t>(r.rank)].bytes_per_s;
        }
    }
    release_planner(run);
    if (status != 0 || run.error != 0)
        return status != 0 ? status : run.error;
    unsigned long long mine_done = run.elements_done, all_done = 0;
    MPI_Allreduce(&mine_done, &all_done, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    if (all_done != rules.total) {
        if (rank == 0)
            std::fprintf(stderr, "hetpu: %s: internal error: %llu of %llu elements processed\n", label, all_done,
                         (unsigned long long)rules.total);
        return -EIO;
    }
    return 0;
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
