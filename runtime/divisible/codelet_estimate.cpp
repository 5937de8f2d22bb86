// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/codelet_estimate.h"

#include <starpu.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

#include "common/settings.h"
#include "runtime/divisible/block_run.h"

namespace hetpu {

namespace {

struct Estimates {
    const hetpu_divisible_job *job = nullptr;
    std::vector<int> workers;
    std::map<uint64_t, std::map<int, double>> seconds;  // count -> worker -> expectation

    double expected(int worker, uint64_t count)
    {
        auto it = seconds.find(count);
        if (it == seconds.end())
            it = seconds.emplace(count, probe(count)).first;
        const auto w = it->second.find(worker);
        return w == it->second.end() ? std::numeric_limits<double>::quiet_NaN() : w->second;
    }

    std::map<int, double> probe(uint64_t count)
    {
        std::map<int, double> out;
        struct starpu_task *task = starpu_task_create();
        if (job->fill_task(job->arg, 0, count, task) == 0 && task->cl && task->cl->model) {
            unsigned ctx = starpu_sched_ctx_get_context();
            if (ctx >= STARPU_NMAX_SCHED_CTXS)
                ctx = 0;  // the global context: the thread set none
            for (int w : workers) {
                unsigned nimpl = 0;
                if (!starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(w), task, &nimpl))
                    continue;
                const double us = starpu_task_expected_length(task, starpu_worker_get_perf_archtype(w, ctx), nimpl);
                if (std::isfinite(us) && us > 0)
                    out[w] = us * 1e-6;
            }
        }
        // Nothing ran on the probe's own handles: let them go without writing anything back.
        const unsigned nbuffers = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
        for (unsigned i = 0; i < nbuffers && i < 32; ++i)
            if ((job->block_handle_mask & (1u << i)) && STARPU_TASK_GET_HANDLE(task, i))
                starpu_data_unregister_no_coherency(STARPU_TASK_GET_HANDLE(task, i));
        discard_unsubmitted(task);
        return out;
    }
};

}  // namespace

void add_codelet_estimates(const hetpu_divisible_job &job, const std::vector<PlannerWorker> &workers, BlockRules &rules)
{
    if (!job.codelet || !job.codelet->model || !job.fill_task)
        return;
    uint64_t requested = 0;
    try {
        requested = Settings().whole("HETPU_BLOCK").value_or(0);
        if (requested == 0)
            requested = job.default_block;
        const uint64_t block = choose_fixed_block(rules, requested, static_cast<unsigned>(workers.size()));
        rules.calibrated_sizes = {block};
        if (rules.total % block != 0)
            rules.calibrated_sizes.push_back(rules.total % block);
    } catch (const std::exception &) {
        return;  // the fixed-block planner reports a bad HETPU_BLOCK; nothing to estimate
    }
    auto estimates = std::make_shared<Estimates>();
    estimates->job = &job;
    for (const PlannerWorker &w : workers)
        estimates->workers.push_back(w.id);
    rules.codelet_expected_s = [estimates](int worker, uint64_t count) { return estimates->expected(worker, count); };
}

}  // namespace hetpu
