// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <queue>
#include <random>

#include "runtime/divisible/core/block_dispatcher.h"
#include "tools/sim/simulated_unit.h"

namespace hetpu::sim {

std::vector<PlannerWorker> planner_workers(const Scenario &scenario)
{
    std::vector<PlannerWorker> workers;
    for (size_t i = 0; i < scenario.units.size(); ++i) {
        const std::string &c = scenario.units[i].unit_class;
        WorkerKind kind = c == "cpu"                    ? WorkerKind::Cpu
                          : (c == "gpu" || c == "cuda") ? WorkerKind::Cuda
                          : c == "opencl"               ? WorkerKind::OpenCL
                                                        : WorkerKind::Other;
        workers.push_back({static_cast<int>(i), kind, scenario.units[i].name});
    }
    return workers;
}

BlockRules block_rules(const Scenario &scenario)
{
    BlockRules rules{scenario.workload, scenario.granule, scenario.min_block};
    normalize_block_rules(rules);
    return rules;
}

namespace {

// A unit's block ends (its callback starts), or its callback, its own refit done, takes
// the planner's lock.
struct Event {
    enum Kind { End, Planning, Start };
    double at;
    uint64_t seq;  // tie-break: deterministic order, first come first served
    int unit;
    Kind kind;
    Assignment block;
    BlockCost cost;
    double submitted;  // when the planner's answer made it available
    double taken;      // when its unit took it (free from then on until end)
    BlockDone done;    // planning: what the planner hears
    std::shared_ptr<PuRefit> refit;
    bool operator>(const Event &o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

class Simulation {
public:
    Simulation(const Scenario &scenario, BlockPlanner &planner, const SimOptions &options)
        : scenario_(scenario), planner_(planner), options_(options), rng_(options.seed)
    {
        for (const auto &spec : scenario.units)
            units_.emplace_back(spec);
        queues_.resize(units_.size());
        busy_.assign(units_.size(), false);
        result_.policy = planner.name();
        for (const auto &spec : scenario.units)
            result_.units.push_back({spec.name, spec.unit_class});
    }

    SimResult run()
    {
        std::vector<int> ids;
        for (size_t i = 0; i < units_.size(); ++i)
            ids.push_back(static_cast<int>(i));
        BlockDispatcher dispatcher(block_rules(scenario_), planner_, ids);
        dispatcher.set_tail_backups(true);  // a simulated job accepts backup copies
        dispatcher.set_withdrawable(options_.withdrawable);
        dispatcher_ = &dispatcher;

        std::vector<Assignment> first;
        const double t0 = decided([&] { first = dispatcher.start(); });
        planner_free_ = t0;
        accept(first, t0);
        for (size_t u = 0; u < units_.size(); ++u)
            try_start(static_cast<int>(u), t0);

        while (!events_.empty()) {
            Event e = events_.top();
            events_.pop();
            if (e.kind == Event::Start) {
                dispatcher.started(e.block.id, e.at);
                continue;
            }
            if (e.kind == Event::End && dispatcher.withdrawn(e.block.id)) {
                // It ran nothing: no block, no measurement, only its unit's time.
                ++result_.withdrawn;
                result_.units[e.unit].busy_s += e.at - e.taken;
                result_.busy_end_s = std::max(result_.busy_end_s, e.at);
                e.done = {e.unit,      e.block.offset, e.block.count, 0, e.cost.transfer_s, e.at,
                          e.submitted, e.block.id,     e.block.backup};
                e.seq = seq_++;
                e.kind = Event::Planning;
                events_.push(std::move(e));
                continue;
            }
            if (e.kind == Event::End) {
                UnitStats &s = result_.units[e.unit];
                ++s.blocks;
                s.elements += e.block.count;
                s.busy_s += e.at - e.taken;
                ++result_.blocks;
                result_.busy_end_s = std::max(result_.busy_end_s, e.at);
                // The first copy of a range to end is kept; a later one was lost time.
                if (dispatcher.claim(e.block.id))
                    result_.makespan_s = std::max(result_.makespan_s, e.at);
                else
                    result_.lost_copy_s += e.at - e.taken;
                if (e.block.backup)
                    ++result_.copies;
                // The unit's callback refits its own models first, without the runtime's
                // lock (PlannerExtensions::prepare_refit): that time is the unit's alone. It
                // stays busy until its whole callback is done.
                e.done = {e.unit, e.block.offset, e.block.count, e.cost.exec_s, e.cost.transfer_s,
                          e.at,   e.submitted,    e.block.id,    e.block.backup};
                const double refit_s = refitted([&] {
                    if ((e.refit = dispatcher.prepare_refit(e.done)))
                        e.refit->run();
                });
                e.at += refit_s;
                e.seq = seq_++;
                e.kind = Event::Planning;
                events_.push(std::move(e));
                continue;
            }
            // The rest of a completion's planning runs under one lock (the StarPU glue's
            // run mutex, runtime/divisible/block_run.cpp): a completion that comes while the
            // planner is busy with another waits for it, and the unit with it.
            std::vector<Assignment> next;
            const double callback = std::max(e.at, planner_free_);
            const double ready = callback + decided([&] { next = dispatcher.complete(e.done, e.refit.get()); });
            planner_free_ = ready;
            busy_[e.unit] = false;
            accept(next, ready);
            for (size_t u = 0; u < units_.size(); ++u)
                try_start(static_cast<int>(u), ready);
        }
        result_.forced_remainder = dispatcher.forced_remainder();
        for (auto &s : result_.units)
            s.idle_s = std::max(0.0, result_.makespan_s - s.busy_s);
        return result_;
    }

private:
    // A decision of the dispatcher and planner: charged its modelled cost when the options
    // give one, else its wall time.
    template <typename Fn> double decided(Fn &&fn)
    {
        if (options_.decision_base_s < 0)
            return charged(fn);
        fn();
        const double s = options_.decision_base_s + options_.decision_per_unit_s * static_cast<double>(units_.size());
        result_.planning_s += s;
        return options_.charge_planning_time ? s : 0.0;
    }

    // The unit's own refit: wall time, none at all when decisions are modelled (their
    // model covers the whole completion).
    template <typename Fn> double refitted(Fn &&fn)
    {
        if (options_.decision_base_s < 0)
            return charged(fn);
        fn();
        return 0.0;
    }

    template <typename Fn> double charged(Fn &&fn)
    {
        auto start = std::chrono::steady_clock::now();
        fn();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        result_.planning_s += s;
        return options_.charge_planning_time ? s : 0.0;
    }

    void accept(const std::vector<Assignment> &as, double at)
    {
        for (const auto &a : as)
            (a.worker >= 0 ? queues_[a.worker] : pool_).push_back({a, at});
    }

    void try_start(int u, double t)
    {
        if (busy_[u])
            return;
        std::deque<Queued> &q = !queues_[u].empty() ? queues_[u] : pool_;
        if (q.empty())
            return;
        const Assignment a = q.front().block;
        const double submitted = q.front().at;
        q.pop_front();
        BlockCost c = units_[u].cost(a.count, t, rng_);
        if (!dispatcher_->take(a.id))
            c.exec_s = c.stall_s = 0;  // withdrawn: its inputs still cross, nothing runs
        busy_[u] = true;
        // Its unseen time runs from its hand-out, behind whatever the unit was doing.
        const double start = std::max(t, submitted + c.unseen_s);
        const double end = start + c.exec_s + c.transfer_s + c.stall_s;
        events_.push({start, seq_++, u, Event::Start, a, c, submitted, t, {}, nullptr});
        events_.push({end, seq_++, u, Event::End, a, c, submitted, t, {}, nullptr});
        if (options_.keep_trace)
            result_.trace.push_back({u, a.offset, a.count, t, end});
    }

    const Scenario &scenario_;
    BlockPlanner &planner_;
    SimOptions options_;
    std::mt19937_64 rng_;
    std::vector<SimulatedUnit> units_;
    struct Queued {
        Assignment block;
        double at;  // simulated time it was handed out
    };
    std::vector<std::deque<Queued>> queues_;
    std::deque<Queued> pool_;
    std::vector<bool> busy_;
    BlockDispatcher *dispatcher_ = nullptr;  // the run's, while run() runs
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    double planner_free_ = 0;  // when the planner's lock is free again (the last completion's end, uncharged)
    uint64_t seq_ = 0;
    SimResult result_;
};

}  // namespace

SimResult simulate(const Scenario &scenario, BlockPlanner &planner, const SimOptions &options)
{
    return Simulation(scenario, planner, options).run();
}

SimResult simulate_static(const Scenario &scenario, const StaticDistribution &distribution, const std::string &policy)
{
    SimResult r;
    r.policy = policy;
    r.makespan_s = distribution.makespan_s;
    uint64_t offset = 0;
    for (size_t i = 0; i < scenario.units.size(); ++i) {
        SimulatedUnit unit(scenario.units[i]);
        UnitStats s{scenario.units[i].name, scenario.units[i].unit_class};
        const uint64_t b = distribution.blocks[i];
        if (b > 0) {
            s.blocks = 1;
            s.elements = b;
            s.busy_s = unit.nominal_cost(b).total();
            ++r.blocks;
            r.trace.push_back({static_cast<int>(i), offset, b, 0.0, s.busy_s});
            offset += b;
        }
        s.idle_s = r.makespan_s - s.busy_s;
        r.units.push_back(s);
    }
    return r;
}

}  // namespace hetpu::sim
