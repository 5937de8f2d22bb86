// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/run_copies.h"

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <vector>

#include "common/settings.h"
#include "runtime/divisible/copies_running.h"
#include "runtime/divisible/core/planner_extensions.h"

namespace hetpu {

int job_backup_hooks(const hetpu_divisible_job &job, const char *label, bool &opted_in)
{
    const int set = (job.fill_private != nullptr) + (job.commit != nullptr) + (job.discard != nullptr);
    opted_in = set == 3;
    if (set == 0 || set == 3)
        return 0;
    std::fprintf(stderr,
                 "hetpu: %s: backup copies need all three of fill_private, commit and discard (%s%s%s missing); set "
                 "them all to opt in, or none\n",
                 label, job.fill_private ? "" : " fill_private", job.commit ? "" : " commit",
                 job.discard ? "" : " discard");
    return -EINVAL;
}

void choose_copies(Run &run, bool opted_in, bool supported)
{
    bool backup_all = false;
    try {
        backup_all = Settings().flag_or("HETPU_BACKUP_ALL", false);
    } catch (const SettingError &e) {
        std::fprintf(stderr, "hetpu: %s (backup copies stay off)\n", e.what());
    }
    const bool allowed = opted_in && supported;
    // A job that does not take copies never gets one, HETPU_BACKUP_ALL included.
    run.dispatcher->set_tail_backups(allowed);
    run.dispatcher->set_backup_all(allowed && backup_all);
    // The dispatcher copies a block at the tail only for a planner that plans through the
    // promises it keeps (plb-hac); its blocks then all run into private output, since any of
    // them may lose to a copy. Otherwise fill_task does all, as without copies.
    PlannerExtensions *x = run.planner->extensions();
    const bool tail_copies = x && run.planner->assigns_workers() && x->queue_planner() != nullptr;
    run.private_outputs = allowed && (backup_all || tail_copies);
    // Blocks in private output can also be withdrawn: one that runs nothing throws nothing
    // away but its (empty) output. Called under run.mutex, from the dispatcher.
    run.dispatcher->set_withdrawable(run.private_outputs);
    Run *r = &run;  // the dispatcher lives and dies with its run
    run.dispatcher->set_on_withdrawn([r](uint64_t id) {
        r->withdrawn.insert(id);
        r->tasks.withdraw(id);
    });
}

void note_units_busy_with_copies(Run &run)
{
    const double now_us = starpu_timing_now();
    for (const BusyUnit &b : units_busy_with_copies())
        if (b.run != &run && b.worker >= 0)
            run.dispatcher->set_busy_until(b.worker, (b.end_us - now_us) * 1e-6);
}

unsigned RunCopies::copies_of(int worker) const
{
    const auto it = copies.find(worker);
    return it == copies.end() ? 0 : it->second;
}

double RunCopies::lost_s_of(int worker) const
{
    const auto it = lost_s.find(worker);
    return it == lost_s.end() ? 0.0 : it->second;
}

RunCopies close_run(Run &run)
{
    std::unique_lock<std::mutex> lock(run.mutex);
    // A losing copy's completion that began before the return finishes with the dispatcher
    // first; every later one sees `returned` from its start to its end (callbacks count
    // themselves in busy_callbacks while they run).
    run.changed.wait(lock, [&] { return run.busy_callbacks == 0; });
    run.returned = true;
    const double now_s = (starpu_timing_now() - run.t0_us) * 1e-6;
    std::vector<BusyUnit> busy;
    for (const LosingCopy &c : run.tasks.losing_copies()) {
        const double rate = c.worker >= 0 && static_cast<size_t>(c.worker) < run.totals.size()
                                ? run.totals[static_cast<size_t>(c.worker)].last_rate
                                : 0.0;
        busy.push_back({&run, c.id, c.worker, run.t0_us + expected_end_s(c, rate, now_s) * 1e6});
    }
    copies_outlive_job(run.tasks.unsettled(), busy);
    return {run.tasks.figures(now_s), run.tasks.lost_by_worker(now_s), run.tasks.copies_by_worker()};
}

void fill_report_copies(hetpu_divisible_report &report, const RunCopies &copies)
{
    const CopyFigures &figures = copies.figures;
    report.copies = figures.copies;
    report.copies_kept = figures.copies_kept;
    report.copies_lost_s = figures.lost_s;
    report.copies_running = figures.running;
}

void release_planner(Run &run)
{
    // Only this thread uses them once the run has returned (close_run).
    run.dispatcher.reset();
    run.planner.reset();
}

}  // namespace hetpu
