// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu_divisible_run(): the single-process runner, and the entry that hands a job of
// several MPI ranks to the multi-rank runner (runtime/mpi/mpi_run.cpp). Both share the run's
// machinery in runtime/divisible/block_run.h.
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/settings.h"
#include "runtime/divisible/block_run.h"
#include "runtime/divisible/run_copies.h"
#include "runtime/divisible/codelet_estimate.h"
#include "runtime/mpi/mpi_owned_run.h"
#include "runtime/mpi/mpi_run.h"
#include "runtime/mpi/mpi_state.h"

namespace hetpu {
namespace {

#ifdef HETPU_HAVE_MPI
// HETPU_MPI_PLANNER: per-node when the job places its data, unless central is asked for.
// (An invalid value was refused at start-up.)
bool per_node_planner(const hetpu_divisible_placement *placement)
{
    std::optional<std::string> choice;
    try {
        choice = Settings().choice("HETPU_MPI_PLANNER");
    } catch (const SettingError &) {
        choice.reset();
    }
    if (choice)
        return *choice == "per-node" && placement;
    return placement != nullptr;
}
#endif

int run_job(const hetpu_divisible_job *job, const hetpu_divisible_placement *placement, hetpu_divisible_report *report)
{
    const char *label = job && job->name ? job->name : "divisible job";
    if (!job || !job->fill_task) {
        std::fprintf(stderr, "hetpu: %s: the job needs a fill_task callback\n", label);
        return -EINVAL;
    }
    if (!hetpu_policy_name()) {
        std::fprintf(stderr, "hetpu: %s: StarPU is not running; call hetpu_init() first\n", label);
        return -EINVAL;
    }
    bool opted_in = false;
    if (int rc = job_backup_hooks(*job, label, opted_in); rc != 0)
        return rc;
    warn_of_submission_throttle(label);
    BlockRules rules{job->total, job->granule, job->min_block, job->name ? job->name : ""};
    try {
        normalize_block_rules(rules);
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", label, e.what());
        return -EINVAL;
    }
    std::vector<PlannerWorker> workers = eligible_workers(*job);
#ifdef HETPU_HAVE_MPI
    // Every rank gets here with the same job (same rules), so every rank takes this branch.
    if (mpi_size() > 1) {
        const bool per_node = per_node_planner(placement);
        // Ranks given different jobs would fail deep inside StarPU-MPI (a truncated
        // message) or silently compute something else: compare what the runner sees.
        const std::string signature =
            "total=" + std::to_string(rules.total) + " granule=" + std::to_string(rules.granule) +
            " min_block=" + std::to_string(rules.min_block) + " handles=" + std::to_string(job->block_handle_mask) +
            " placed=" + (placement ? "yes" : "no") + " HETPU_MPI_PLANNER=" + (per_node ? "per-node" : "central");
        if (int rc = same_job_everywhere(label, signature); rc != 0)
            return rc;
        try {
            if (per_node)
                return run_per_node(*job, *placement, report, rules, workers, label);
            // The central planner relays blocks through rank 0: every rank holds the whole job.
            if (placement && placement->held_count > 0) {
                const int whole = placement->held_offset == 0 && placement->held_count == rules.total;
                int all_whole = whole;
                MPI_Allreduce(&whole, &all_whole, 1, MPI_INT, MPI_MIN, mpi_control_comm());
                if (!all_whole) {
                    if (!whole)
                        std::fprintf(stderr,
                                     "hetpu: %s: rank %d holds [%llu, %llu) of the job, but the central planner "
                                     "(HETPU_MPI_PLANNER=central) needs the whole job on every rank: take the share "
                                     "from hetpu_mpi_share()\n",
                                     label, mpi_rank(), (unsigned long long)placement->held_offset,
                                     (unsigned long long)(placement->held_offset + placement->held_count));
                    return -EINVAL;
                }
            } else if (placement && placement->hold) {
                int rc = placement->hold(placement->arg, 0, rules.total, HETPU_HOLD_SHARE);
                int worst = rc;
                MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, mpi_control_comm());
                if (worst != 0) {
                    std::fprintf(stderr, "hetpu: %s: rank %d cannot hold the whole job for the central planner%s\n",
                                 label, mpi_rank(), rc != 0 ? "" : " (another rank cannot)");
                    return worst;
                }
            }
            return run_multi_rank(*job, report, rules, workers, label);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "hetpu: fatal: %s in a multi-rank run\n", e.what());
            std::abort();  // other ranks wait in collectives: a return would hang the job
        }
    }
#endif
    if (workers.empty()) {
        std::fprintf(stderr, "hetpu: %s: no worker can run the job's codelet\n", label);
        return -ENODEV;
    }
    if (placement && placement->held_count > 0 &&
        (placement->held_offset != 0 || placement->held_count != rules.total)) {
        std::fprintf(stderr, "hetpu: %s: a single process must hold the whole job, not [%llu, %llu) of %llu elements\n",
                     label, (unsigned long long)placement->held_offset,
                     (unsigned long long)(placement->held_offset + placement->held_count),
                     (unsigned long long)rules.total);
        return -EINVAL;
    }
    if (placement && placement->hold && placement->held_count == 0) {
        if (int rc = placement->hold(placement->arg, 0, rules.total, HETPU_HOLD_SHARE); rc != 0) {
            std::fprintf(stderr, "hetpu: %s: cannot hold the job's data: %s\n", label,
                         std::strerror(rc < 0 ? -rc : rc));
            return rc < 0 ? rc : -rc;
        }
    }

    std::shared_ptr<Run> run_ptr = make_run(*job);
    Run &run = *run_ptr;
    uint64_t fixed_block = 0;
    BlockRules planner_rules = rules;
    add_codelet_estimates(*job, workers, planner_rules);
    if (int rc = make_job_planner(*job, workers, planner_rules, label, run.planner, fixed_block); rc)
        return rc;
    std::vector<int> ids;
    for (const auto &w : workers)
        ids.push_back(w.id);
    run.dispatcher = std::make_unique<BlockDispatcher>(rules, *run.planner, ids);
    choose_copies(run, opted_in, true);
    note_units_busy_with_copies(run);

    const double t0 = start_run(run);
    wait_until_done(run);
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;
    const RunCopies copies = close_run(run);

    if (run.dispatcher->forced_remainder())
        std::fprintf(stderr, "hetpu: %s: planner %s declined every worker; the remainder was forced onto one worker\n",
                     label, run.planner->name().c_str());

    if (report) {
        fill_report_header(*report, run, makespan_s, fixed_block, 1);
        report->share_count = rules.total;
        for (const auto &w : workers) {
            if (report->nworkers >= STARPU_NMAXWORKERS)
                break;
            hetpu_worker_report &r = report->workers[report->nworkers++];
            const WorkerTotals &t = run.totals[w.id];
            r.workerid = w.id;
            r.type = starpu_worker_get_type(w.id);
            std::snprintf(r.name, sizeof r.name, "%s", w.name.c_str());
            r.blocks = t.blocks;
            r.elements = t.elements;
            r.busy_s = t.busy_s;
            r.transfer_s = t.transfer_s;
            r.rank = 0;
            std::snprintf(r.host, sizeof r.host, "%s", hetpu_host_name());
            r.copies = copies.copies_of(w.id);
            r.lost_s = copies.lost_s_of(w.id);
        }
        fill_report_copies(*report, copies);
    }
    const int status = run_status(run, rules, label);
    release_planner(run);
    return status;
}

}  // namespace
}  // namespace hetpu

extern "C" int hetpu_divisible_run(const struct hetpu_divisible_job *job, struct hetpu_divisible_report *report)
{
    return hetpu::run_job(job, nullptr, report);
}

extern "C" int hetpu_mpi_share(const struct hetpu_divisible_job *job, uint64_t *offset, uint64_t *count)
{
    if (!job || !offset || !count)
        return -EINVAL;
    const char *label = job->name ? job->name : "divisible job";
    hetpu::BlockRules rules{job->total, job->granule, job->min_block, job->name ? job->name : ""};
    try {
        hetpu::normalize_block_rules(rules);
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", label, e.what());
        return -EINVAL;
    }
    *offset = 0;
    *count = rules.total;
#ifdef HETPU_HAVE_MPI
    // Only a placed job under the per-node planner splits its data.
    const hetpu_divisible_placement probe = {};
    if (hetpu::mpi_size() > 1 && hetpu::per_node_planner(&probe)) {
        if (!hetpu_policy_name()) {
            std::fprintf(stderr, "hetpu: %s: StarPU is not running; call hetpu_init_mpi() first\n", label);
            return -EINVAL;
        }
        std::vector<hetpu::NodeState> nodes;
        std::vector<hetpu::Block> shares;
        bool held = false;
        const std::vector<hetpu::PlannerWorker> workers = hetpu::eligible_workers(*job);
        if (int rc = hetpu::start_shares(*job, nullptr, rules, workers, label, nodes, shares, held); rc != 0)
            return rc;
        *offset = shares[static_cast<size_t>(hetpu::mpi_rank())].offset;
        *count = shares[static_cast<size_t>(hetpu::mpi_rank())].count;
    }
#endif
    return 0;
}

extern "C" int hetpu_divisible_run_placed(const struct hetpu_divisible_job *job,
                                          const struct hetpu_divisible_placement *placement,
                                          struct hetpu_divisible_report *report)
{
    return hetpu::run_job(job, placement, report);
}
