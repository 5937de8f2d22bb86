// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/cluster_sim.h"

#include <algorithm>
#include <ctime>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <stdexcept>

#include "runtime/divisible/core/block_dispatcher.h"
#include "runtime/mpi/core/coordinator_cadence.h"
#include "runtime/mpi/core/range_moves.h"
#include "runtime/mpi/core/node_shares.h"
#include "runtime/mpi/core/share_coordinator.h"
#include "tools/sim/cluster_parts.h"
#include "tools/sim/simulated_unit.h"

namespace hetpu::sim {

namespace {

using namespace cluster_parts;

double thread_cpu_s()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

class ClusterSimulation {
public:
    ClusterSimulation(const ClusterScenario &c, ClusterMode mode, const PlannerMaker &make, const ClusterOptions &o)
        : c_(c), mode_(mode), make_(make), options_(o), rng_(o.seed)
    {
        rules_ = {c.workload, c.granule, c.min_block};
        normalize_block_rules(rules_);
        rank0_.spec = c.rank0_link;
        for (size_t n = 0; n < c.nodes.size(); ++n) {
            links_.push_back({c.nodes[n].link, 0});
            net_.links.push_back({c.nodes[n].link.latency_s, c.nodes[n].link.bytes_per_s});
            for (const UnitSpec &u : c.nodes[n].units) {
                units_.emplace_back(u);
                node_of_.push_back(static_cast<int>(n));
            }
        }
        result_.mode = mode == ClusterMode::Central ? "central" : "per-node";
        result_.nodes = static_cast<unsigned>(c.nodes.size());
        result_.pus = static_cast<unsigned>(units_.size());
        if (o.check_coverage)
            result_.coverage.assign(c.workload, 0);
    }

    ClusterResult run()
    {
        if (mode_ == ClusterMode::Central)
            start_central();
        else
            start_per_node();
        while (!events_.empty()) {
            Event e = events_.top();
            events_.pop();
            handle(e);
        }
        return result_;
    }

private:
    // ---- set-up

    std::vector<PlannerWorker> workers_of(const std::vector<int> &pus) const
    {
        std::vector<PlannerWorker> w;
        for (size_t i = 0; i < pus.size(); ++i) {
            const std::string &cls = units_[static_cast<size_t>(pus[i])].spec().unit_class;
            const WorkerKind kind = cls == "cpu"      ? WorkerKind::Cpu
                                    : cls == "opencl" ? WorkerKind::OpenCL
                                                      : WorkerKind::Cuda;
            w.push_back({static_cast<int>(i), kind, units_[static_cast<size_t>(pus[i])].spec().name});
        }
        return w;
    }

    Domain &add_domain(int node, std::vector<int> pus, const BlockRules &planner_rules, Block share)
    {
        domains_.emplace_back();
        Domain &d = domains_.back();
        d.node = node;
        d.pus = std::move(pus);
        d.queues.resize(d.pus.size());
        d.busy.assign(d.pus.size(), false);
        d.unit_rate.assign(d.pus.size(), 0);
        d.planner = make_(workers_of(d.pus), planner_rules);
        std::vector<int> ids;
        for (size_t i = 0; i < d.pus.size(); ++i)
            ids.push_back(static_cast<int>(i));
        d.dispatcher = std::make_unique<BlockDispatcher>(rules_, *d.planner, ids, share);
        d.handed = share.count;
        if (share.count > 0)
            d.owned.push_back(share);
        return d;
    }

    void start_central()
    {
        for (const ClusterNode &n : c_.nodes)
            if (n.fail_at_s >= 0)
                throw std::invalid_argument("a failing node cannot be simulated under the central planner (its "
                                            "runner has no recovery either): use the per-node mode");
        std::vector<int> all;
        for (size_t u = 0; u < units_.size(); ++u)
            all.push_back(static_cast<int>(u));
        domains_.reserve(1);
        Domain &d = add_domain(-1, all, rules_, {0, rules_.total});
        std::vector<Assignment> first;
        const double t0 = planned(d, [&] { first = d.dispatcher->start(); });
        d.planner_free = t0;
        accept(0, first, t0);
        start_idle(0, t0);
    }

    void start_per_node()
    {
        std::vector<NodeState> nodes(c_.nodes.size());
        std::vector<std::vector<int>> pus(c_.nodes.size());
        for (size_t u = 0; u < units_.size(); ++u)
            pus[static_cast<size_t>(node_of_[u])].push_back(static_cast<int>(u));
        for (size_t n = 0; n < nodes.size(); ++n) {
            nodes[n].rank = static_cast<int>(n);
            nodes[n].pus = static_cast<unsigned>(pus[n].size());
            nodes[n].pinned = !c_.nodes[n].moves;
            std::vector<SimulatedUnit> mine;
            for (int u : pus[n])
                mine.push_back(units_[static_cast<size_t>(u)]);
            // What calibrations of the node's unit kinds tell before it runs (not what
            // slows it down today).
            nodes[n].nominal_rate = nominal_rate(mine, rules_.total / std::max<size_t>(units_.size(), 1));
            // What a previous run measured: the node's nominal throughput, slowdown included.
            if (options_.known_rates && !mine.empty())
                nodes[n].rate = static_cast<double>(rules_.total) / nominal_bound(mine, rules_.total);
        }
        // Every rank computes the shares from the same figures: no coordinator time.
        const std::vector<Block> shares = initial_shares(rules_, nodes);
        for (size_t n = 0; n < nodes.size(); ++n)
            nodes[n].remaining = shares[n].count;  // what the coordinator handed out
        net_.bytes_per_element = c_.bytes_in + c_.bytes_out;
        net_.min_gain_s = 2 * report_period(1e9, static_cast<int>(nodes.size()));
        coordinator_ = std::make_unique<ShareCoordinator>(nodes, net_);
        domains_.reserve(nodes.size());
        for (size_t n = 0; n < nodes.size(); ++n) {
            BlockRules planner_rules = rules_;
            if (shares[n].count >= rules_.min_block)
                planner_rules.total = shares[n].count;
            add_domain(static_cast<int>(n), pus[n], planner_rules, shares[n]);
        }
        for (size_t n = 0; n < nodes.size(); ++n) {
            Domain &d = domains_[n];
            std::vector<Assignment> first;
            const double t0 = planned(d, [&] { first = d.dispatcher->start(); });
            d.planner_free = t0;
            accept(static_cast<int>(n), first, t0);
            start_idle(static_cast<int>(n), t0);
            schedule_report(static_cast<int>(n), t0);
            if (c_.nodes[n].fail_at_s >= 0)
                push(c_.nodes[n].fail_at_s, Kind::Fail, static_cast<int>(n));
        }
    }

    // ---- events

    void push(double at, Kind kind, int domain, Event e = {})
    {
        e.at = at;
        e.seq = seq_++;
        e.kind = kind;
        e.domain = domain;
        events_.push(std::move(e));
    }

    // Runs fn, counts its CPU time on this host in `measured` (the thread's: other load on
    // the host does not inflate it) and its modelled time in `modelled`; returns the
    // modelled time when it is charged (the simulation depends on nothing else).
    template <typename Fn> double charged(double &modelled, double &measured, double model_s, Fn &&fn)
    {
        const double start = thread_cpu_s();
        fn();
        measured += thread_cpu_s() - start;
        modelled += model_s;
        return options_.charge_planning_time ? model_s : 0.0;
    }

    template <typename Fn> double planned(const Domain &d, Fn &&fn)
    {
        return charged(result_.planning_s, result_.planning_wall_s, planner_call_s(d.pus.size()), std::forward<Fn>(fn));
    }

    void handle(Event &e)
    {
        Domain *d = e.domain >= 0 ? &domains_[static_cast<size_t>(e.domain)] : nullptr;
        if (d && d->failed && e.kind != Kind::Detect)
            return;  // a failed node does nothing more; the coordinator finds out later
        switch (e.kind) {
        case Kind::BlockEnd: block_end(*d, e); break;
        case Kind::Complete: complete(*d, e); break;
        case Kind::Report: report(*d, e.at, false); break;
        case Kind::Decide: decide(e); break;
        case Kind::Give: give(*d, e); break;
        case Kind::Take: take(*d, e); break;
        case Kind::Returned: returned(*d, e); break;
        case Kind::Fail: fail(*d, e.at); break;
        case Kind::Detect: detect(e); break;
        case Kind::Reread: reread(*d, e); break;
        }
    }

    // Blocks handed out at t: central blocks for a PU off node 0 start their inputs'
    // journey from rank 0 now (StarPU-MPI sends as soon as the main thread posts them).
    void accept(int domain, const std::vector<Assignment> &as, double t)
    {
        Domain &d = domains_[static_cast<size_t>(domain)];
        for (const Assignment &a : as) {
            double ready = t;
            if (a.worker >= 0)
                ready = inputs_ready(d, a, t);
            else
                ready = -1;
            (a.worker >= 0 ? d.queues[static_cast<size_t>(a.worker)] : d.pool).push_back({a, t, ready});
        }
    }

    double inputs_ready(Domain &d, const Assignment &a, double t)
    {
        const int node = node_of_[static_cast<size_t>(d.pus[static_cast<size_t>(a.worker)])];
        if (mode_ != ClusterMode::Central || node == 0)
            return t;
        const double bytes = c_.bytes_in * static_cast<double>(a.count);
        result_.rank0_bytes += bytes;
        return send(t, bytes, rank0_, &links_[static_cast<size_t>(node)]);
    }

    void start_idle(int domain, double t)
    {
        Domain &d = domains_[static_cast<size_t>(domain)];
        for (size_t u = 0; u < d.pus.size(); ++u)
            try_start(domain, static_cast<int>(u), t);
    }

    void try_start(int domain, int u, double t)
    {
        Domain &d = domains_[static_cast<size_t>(domain)];
        if (d.busy[static_cast<size_t>(u)] || d.failed)
            return;
        std::deque<Queued> &q = !d.queues[static_cast<size_t>(u)].empty() ? d.queues[static_cast<size_t>(u)] : d.pool;
        if (q.empty())
            return;
        Queued item = q.front();
        q.pop_front();
        if (item.ready < 0) {
            Assignment placed = item.block;
            placed.worker = u;
            item.ready = inputs_ready(d, placed, t);
        }
        const SimulatedUnit &unit = units_[static_cast<size_t>(d.pus[static_cast<size_t>(u)])];
        const double start = std::max({t, item.handed + unit.spec().unseen_s, item.ready});
        const BlockCost cost = unit.cost(item.block.count, start, rng_);
        d.busy[static_cast<size_t>(u)] = true;
        Event e;
        e.unit = u;
        e.block = item.block;
        e.block.worker = item.block.worker >= 0 ? item.block.worker : -1;
        e.done = {item.block.worker >= 0 ? item.block.worker : u,
                  item.block.offset,
                  item.block.count,
                  cost.exec_s,
                  cost.transfer_s + (item.ready - item.handed),
                  0,
                  item.handed};
        push(start + cost.exec_s + cost.transfer_s + cost.stall_s, Kind::BlockEnd, domain, e);
    }

    void block_end(Domain &d, Event &e)
    {
        const int domain = static_cast<int>(&d - domains_.data());
        ++result_.blocks;
        d.busy[static_cast<size_t>(e.unit)] = false;
        if (e.done.exec_s + e.done.transfer_s > 0)
            d.unit_rate[static_cast<size_t>(e.unit)] =
                static_cast<double>(e.block.count) / (e.done.exec_s + e.done.transfer_s);
        double home = e.at;
        const int node = node_of_[static_cast<size_t>(d.pus[static_cast<size_t>(e.unit)])];
        if (mode_ == ClusterMode::Central && node != 0) {
            const double bytes = c_.bytes_out * static_cast<double>(e.block.count);
            result_.rank0_bytes += bytes;
            home = send(e.at, bytes, links_[static_cast<size_t>(node)], &rank0_);
            e.done.transfer_s += home - e.at;
        }
        e.done.end_s = home;
        try_start(domain, e.unit, e.at);
        push(home, Kind::Complete, domain, e);
    }

    void complete(Domain &d, Event &e)
    {
        const int domain = static_cast<int>(&d - domains_.data());
        result_.makespan_s = std::max(result_.makespan_s, e.at);
        std::vector<Assignment> next;
        const double callback = std::max(e.at, d.planner_free);
        const double ready = callback + planned(d, [&] {
                                 std::unique_ptr<PuRefit> refit = d.dispatcher->prepare_refit(e.done);
                                 if (refit)
                                     refit->run();
                                 next = d.dispatcher->complete(e.done, refit.get());
                             });
        d.planner_free = ready;
        accept(domain, next, ready);
        start_idle(domain, ready);
        if (mode_ == ClusterMode::Central) {
            cover(e.block.offset, e.block.count, 1);
            return;
        }
        d.done += e.block.count;
        // A block may span two ranges borrowed side by side (the cursor joins them) or a
        // borrowed range and the node's own: each range is credited with what it shares.
        std::vector<uint64_t> home;
        uint64_t borrowed = 0;
        for (auto &[move, b] : d.borrowed) {
            const uint64_t shared = overlap(Block{e.block.offset, e.block.count}, b.range);
            borrowed += shared;
            if (shared > 0 && (b.home += shared) >= b.range.count)
                home.push_back(move);
        }
        if (borrowed == 0)
            cover(e.block.offset, e.block.count, 1);
        else if (borrowed < e.block.count)
            cover_own(d, Block{e.block.offset, e.block.count});
        for (uint64_t move : home)
            return_results(d, move, ready);
        if (idle(d))
            report(d, ready, true);
    }

    // The elements of `block` in none of the node's borrowed ranges (theirs are covered when
    // their results reach their owner).
    void cover_own(const Domain &d, const Block &block)
    {
        for (uint64_t i = block.offset; options_.check_coverage && i < block.offset + block.count; ++i) {
            bool theirs = false;
            for (const auto &[move, b] : d.borrowed)
                theirs = theirs || overlap(Block{i, 1}, b.range) > 0;
            cover(i, theirs ? 0 : 1, 1);
        }
    }

    void cover(uint64_t offset, uint64_t count, int delta)
    {
        if (!options_.check_coverage)
            return;
        for (uint64_t i = offset; i < offset + count && i < result_.coverage.size(); ++i)
            result_.coverage[i] = static_cast<unsigned>(static_cast<int>(result_.coverage[i]) + delta);
    }

    bool idle(const Domain &d) const { return d.dispatcher->finished() && d.borrowed.empty() && d.incoming == 0; }

    // ---- per-node: reports and the coordinator

    int ranks() const { return static_cast<int>(domains_.size()); }

    // The rank's periodic report, at the runner's cadence (coordinator_cadence.h); staggered
    // so that 1,024 nodes do not all report at the same instant.
    void schedule_report(int node, double t)
    {
        Domain &d = domains_[static_cast<size_t>(node)];
        if (d.reporting)
            return;
        d.reporting = true;
        const double phase =
            report_period(t, ranks()) * (1.0 + static_cast<double>(node) / static_cast<double>(domains_.capacity()));
        push(t + phase, Kind::Report, node);
    }

    // A report from node d to rank 0 at t, as the runner fills it (runtime/mpi/owned_rank.cpp).
    void send_report(Domain &d, double t, ReportEvent event, uint64_t move, uint64_t moved)
    {
        Event e;
        WireReport &r = e.report;
        r.rank = d.node;
        r.event = event;
        r.move = move;
        r.moved = moved;
        r.done = d.done;
        r.remaining = d.dispatcher->remaining();
        r.in_flight = work_left(d.handed - r.remaining, d.done, d.rate(), t);
        r.elapsed_s = t;
        r.rate = d.rate();
        r.idle = idle(d) ? 1 : 0;
        push(t + links_[static_cast<size_t>(d.node)].spec.latency_s + rank0_.spec.latency_s, Kind::Decide, d.node, e);
    }

    void report(Domain &d, double t, bool immediate)
    {
        if (!immediate)
            d.reporting = false;
        send_report(d, t, kProgress, 0, 0);
        if (!idle(d))
            schedule_report(d.node, t);
    }

    // A report reaches rank 0: the coordinator handles it once done with the ones before,
    // and plans a round when the core says one is due (the runner's rule, one code path).
    void decide(Event &e)
    {
        double at = std::max(e.at, coordinator_free_);
        ++result_.reports;
        at += charged(result_.coordinator_s, result_.coordinator_wall_s, kReportHandlingS,
                      [&] { coordinator_->heard(e.report); });
        std::vector<MoveOrder> orders;
        if (coordinator_->start_round(at)) {
            ++result_.coordinator_calls;
            at += charged(result_.coordinator_s, result_.coordinator_wall_s, round_cost_s(domains_.size()),
                          [&] { orders = coordinator_->plan(rules_); });
        }
        coordinator_free_ = at;
        for (const MoveOrder &o : orders) {
            Event g;
            g.move = o.id;
            g.unit = o.move.to;
            g.range = {0, o.move.count};
            push(at + rank0_.spec.latency_s + links_[static_cast<size_t>(o.move.from)].spec.latency_s, Kind::Give,
                 o.move.from, g);
        }
    }

    bool owns(const Domain &d, const Block &b) const
    {
        for (const Block &o : d.owned)
            if (b.offset >= o.offset && b.offset + b.count <= o.offset + o.count)
                return true;
        return false;
    }

    void give(Domain &d, Event &e)
    {
        const int to = e.unit;
        Block tail;
        if (!domains_[static_cast<size_t>(to)].failed)
            tail = d.dispatcher->take_tail(e.range.count, [&](const Block &back) { return owns(d, back); });
        send_report(d, e.at, kGave, e.move, tail.count);
        if (tail.count == 0)
            return;
        ++result_.moves;
        d.handed -= tail.count;
        const double bytes = c_.bytes_in * static_cast<double>(tail.count);
        result_.moved_bytes += bytes;
        if (d.node == 0 || to == 0)
            result_.rank0_bytes += bytes;
        const double arrive = send(e.at, bytes, links_[static_cast<size_t>(d.node)], &links_[static_cast<size_t>(to)]);
        Event t;
        t.move = e.move;
        t.unit = d.node;  // the owner
        t.range = tail;
        ++domains_[static_cast<size_t>(to)].incoming;
        push(arrive, Kind::Take, to, t);
    }

    // A range arrives (moved here, or re-read after a failure): its blocks join the node's work.
    void add_work(Domain &d, const Event &e)
    {
        const int domain = static_cast<int>(&d - domains_.data());
        --d.incoming;
        d.handed += e.range.count;
        std::vector<Assignment> next;
        const double ready = std::max(e.at, d.planner_free) +
                             planned(d, [&] { next = d.dispatcher->add_range(e.range.offset, e.range.count); });
        d.planner_free = ready;
        accept(domain, next, ready);
        start_idle(domain, ready);
        schedule_report(domain, e.at);
    }

    void take(Domain &d, Event &e)
    {
        d.borrowed[e.move] = {e.unit, e.range, 0};
        add_work(d, e);
        send_report(d, e.at, kArrived, e.move, 0);
    }

    void return_results(Domain &d, uint64_t move, double t)
    {
        const Domain::Borrowed b = d.borrowed[move];
        d.borrowed.erase(move);
        const double bytes = c_.bytes_out * static_cast<double>(b.range.count);
        result_.moved_bytes += bytes;
        if (d.node == 0 || b.from == 0)
            result_.rank0_bytes += bytes;
        const double home = send(t, bytes, links_[static_cast<size_t>(d.node)], &links_[static_cast<size_t>(b.from)]);
        Event r;
        r.range = b.range;
        push(home, Kind::Returned, b.from, r);
    }

    void returned(Domain &d, Event &e)
    {
        (void)d;
        result_.makespan_s = std::max(result_.makespan_s, e.at);
        cover(e.range.offset, e.range.count, 1);
    }

    // ---- failures (per-node)

    void fail(Domain &d, double t)
    {
        d.failed = true;
        for (auto &q : d.queues)
            q.clear();
        d.pool.clear();
        // The coordinator notices when two reports are missing.
        push(t + 2 * report_period(t, ranks()), Kind::Detect, d.node);
    }

    void detect(Event &e)
    {
        Domain &f = domains_[static_cast<size_t>(e.domain)];
        coordinator_->lost(e.domain);
        // Its results died with it: its whole share is computed again. Ranges it had
        // borrowed go back to their owners.
        std::vector<Block> lost = f.owned;
        f.owned.clear();
        for (const Block &b : lost) {
            if (options_.check_coverage)
                for (uint64_t i = b.offset; i < b.offset + b.count; ++i)
                    result_.coverage[i] = 0;
        }
        for (auto &[move, b] : f.borrowed)
            lost.push_back(b.range);  // its owner's results never come: computed again
        f.borrowed.clear();
        std::vector<int> live;
        std::vector<double> rates;
        const std::vector<NodeState> &known = coordinator_->nodes();
        for (size_t n = 0; n < domains_.size(); ++n)
            if (!domains_[n].failed && !known[n].failed && known[n].pus > 0) {
                live.push_back(static_cast<int>(n));
                rates.push_back(known[n].rate > 0 ? known[n].rate : known[n].nominal_rate);
            }
        if (live.empty())
            throw std::invalid_argument("every node failed: the job cannot end");
        // Each live node reads its part's inputs again over its own link.
        for (const auto &[n, range] : share_lost(lost, live, rates, rules_)) {
            Domain &d = domains_[static_cast<size_t>(n)];
            const double bytes = c_.bytes_in * static_cast<double>(range.count);
            result_.moved_bytes += bytes;
            if (n == 0)
                result_.rank0_bytes += bytes;
            result_.redone_elements += range.count;
            ++d.incoming;
            Event r;
            r.range = range;
            push(send(e.at, bytes, links_[static_cast<size_t>(n)], nullptr), Kind::Reread, n, r);
        }
    }

    void reread(Domain &d, Event &e)
    {
        d.owned.push_back(e.range);
        add_work(d, e);
    }

    const ClusterScenario &c_;
    ClusterMode mode_;
    const PlannerMaker &make_;
    ClusterOptions options_;
    std::mt19937_64 rng_;
    BlockRules rules_;
    std::vector<SimulatedUnit> units_;
    std::vector<int> node_of_;  // global PU -> node
    std::vector<FifoLink> links_;
    FifoLink rank0_;
    std::vector<Domain> domains_;
    NodeNetwork net_;  // the nodes' links, as the coordinator prices moves
    std::unique_ptr<ShareCoordinator> coordinator_;
    double coordinator_free_ = 0;  // rank 0's main thread: busy with reports and rounds until then
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    uint64_t seq_ = 0;
    ClusterResult result_;
};

}  // namespace

ClusterResult simulate_cluster(const ClusterScenario &cluster, ClusterMode mode, const PlannerMaker &make_planner,
                               const ClusterOptions &options)
{
    ClusterResult r = ClusterSimulation(cluster, mode, make_planner, options).run();
    r.bound_s = cluster_bound(cluster);
    return r;
}

}  // namespace hetpu::sim
