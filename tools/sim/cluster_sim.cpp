// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/cluster_sim.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <queue>
#include <random>
#include <stdexcept>

#include "runtime/divisible/core/block_dispatcher.h"
#include "runtime/mpi/core/node_shares.h"
#include "tools/sim/simulated_unit.h"

namespace hetpu::sim {

namespace {

// Elements a unit finishes by time t when it starts at 0 (noise-free, at the slowdown in
// force from the start).
uint64_t elements_by(const SimulatedUnit &u, double t, uint64_t cap)
{
    const double factor = u.factor_at(0);
    if (u.nominal_cost(1).total() * factor > t)
        return 0;
    uint64_t lo = 1, hi = cap;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        if (u.nominal_cost(mid).total() * factor <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

double bound_of(const std::vector<SimulatedUnit> &units, uint64_t workload)
{
    double lo = 0, hi = 1;
    auto enough = [&](double t) {
        uint64_t sum = 0;
        for (const SimulatedUnit &u : units)
            if ((sum += elements_by(u, t, workload)) >= workload)
                return true;
        return false;
    };
    while (!enough(hi))
        hi *= 2;
    for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i)
        (enough((lo + hi) / 2) ? hi : lo) = (lo + hi) / 2;
    return hi;
}

struct FifoLink {
    Link spec;
    double free = 0;
};

// Data of `bytes` over link a and then b (FIFO both, the slower one's bandwidth), from t:
// when it arrives.
double send(double t, double bytes, FifoLink &a, FifoLink *b)
{
    double bw = a.spec.bytes_per_s, start = std::max(t, a.free), latency = a.spec.latency_s;
    if (b) {
        bw = std::min(bw, b->spec.bytes_per_s);
        start = std::max(start, b->free);
        latency += b->spec.latency_s;
    }
    const double end = start + bytes / bw;
    a.free = end;
    if (b)
        b->free = end;
    return end + latency;
}

enum class Kind { BlockEnd, Complete, Report, Decide, Give, Take, Returned, Fail, Detect, Reread };

struct Event {
    double at;
    uint64_t seq;
    Kind kind;
    int domain = -1;  // the dispatcher (0 under central; the node under per-node)
    int unit = -1;    // local unit of the domain
    Assignment block;
    BlockDone done;
    uint64_t move = 0;
    Block range;
    bool operator>(const Event &o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct Queued {
    Assignment block;
    double handed;
    double ready;  // its inputs are where it runs (< 0: not sent yet, a pool block)
};

// A dispatcher and its planner over some units: all PUs (central) or one node's.
struct Domain {
    int node = -1;         // per-node: the node; central: -1
    std::vector<int> pus;  // local unit -> global PU
    std::unique_ptr<BlockPlanner> planner;
    std::unique_ptr<BlockDispatcher> dispatcher;
    std::vector<std::deque<Queued>> queues;
    std::deque<Queued> pool;
    std::vector<bool> busy;
    double planner_free = 0;
    // Per-node bookkeeping.
    bool failed = false;
    bool reporting = false;  // a periodic report is scheduled
    uint64_t done = 0, handed = 0;
    std::vector<Block> owned;  // its share and what it took over from failed nodes
    struct Borrowed {
        int from;
        Block range;
        uint64_t home = 0;
    };
    std::map<uint64_t, Borrowed> borrowed;
    unsigned incoming = 0;          // moves and re-reads on their way here
    std::vector<double> unit_rate;  // per local unit: elements per second of its last block
    // The node's speed: its units' on their last blocks, once every unit has run one (a
    // partial sum would make a node look slower than it is); 0 until then.
    double rate() const
    {
        double r = 0;
        for (double u : unit_rate) {
            if (u <= 0)
                return 0;
            r += u;
        }
        return r;
    }
};

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
        const double t0 = charged(result_.planning_s, [&] { first = d.dispatcher->start(); });
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
            if (options_.known_rates) {
                std::vector<SimulatedUnit> mine;
                for (int u : pus[n])
                    mine.push_back(units_[static_cast<size_t>(u)]);
                // What a previous run measured: the node's nominal throughput.
                nodes[n].rate = static_cast<double>(rules_.total) / bound_of(mine, rules_.total);
            }
        }
        std::vector<Block> shares;
        charged(result_.coordinator_s, [&] { shares = initial_shares(rules_, nodes); });
        state_ = nodes;
        for (size_t n = 0; n < nodes.size(); ++n)
            state_[n].remaining = shares[n].count;  // what the coordinator handed out
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
            const double t0 = charged(result_.planning_s, [&] { first = d.dispatcher->start(); });
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

    template <typename Fn> double charged(double &account, Fn &&fn)
    {
        const auto start = std::chrono::steady_clock::now();
        fn();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        account += s;
        return options_.charge_planning_time ? s : 0.0;
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
        const double ready = callback + charged(result_.planning_s, [&] {
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
        bool borrowed = false;
        for (auto &[move, b] : d.borrowed)
            if (e.block.offset >= b.range.offset && e.block.offset < b.range.offset + b.range.count) {
                borrowed = true;
                if ((b.home += e.block.count) >= b.range.count)
                    return_results(d, move, ready);
                break;
            }
        if (!borrowed)
            cover(e.block.offset, e.block.count, 1);
        if (idle(d))
            report(d, ready, true);
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

    void schedule_report(int node, double t)
    {
        Domain &d = domains_[static_cast<size_t>(node)];
        if (d.reporting)
            return;
        d.reporting = true;
        // Staggered so that 1,024 nodes do not all report at the same instant.
        const double phase =
            c_.report_period_s * (1.0 + static_cast<double>(node) / static_cast<double>(domains_.capacity()));
        push(t + phase, Kind::Report, node);
    }

    void report(Domain &d, double t, bool immediate)
    {
        const int node = d.node;
        if (!immediate)
            d.reporting = false;
        Event e;
        e.block.offset = d.dispatcher->remaining();
        e.block.count = work_left(d.handed - e.block.offset, d.done, d.rate(), t);
        e.done.exec_s = d.rate();  // as the runner reports it (runtime/mpi_owned_run.cpp)
        e.done.transfer_s = static_cast<double>(d.done);
        e.move = idle(d) ? 1 : 0;
        push(t + links_[static_cast<size_t>(node)].spec.latency_s + rank0_.spec.latency_s, Kind::Decide, node, e);
        if (!idle(d))
            schedule_report(node, t);
    }

    void decide(Event &e)
    {
        NodeState &n = state_[static_cast<size_t>(e.domain)];
        n.remaining = e.block.offset;
        n.in_flight = e.block.count;
        // A node's first blocks (a planner's training) run below its speed: its measured
        // rate counts once 2% of its work is done (training is over), or once it ran dry.
        const double done = e.done.transfer_s;
        if (e.done.exec_s > 0 && (e.move || done >= 0.02 * (done + static_cast<double>(n.remaining + n.in_flight))))
            n.rate = e.done.exec_s;
        // Decisions at most a few times per report period, at once when a node runs dry:
        // 1,024 nodes' reports stay cheap for the coordinator.
        if (e.move == 0 && e.at - last_decision_ < c_.report_period_s / 4)
            return;
        last_decision_ = e.at;
        std::vector<ShareMove> moves;
        NodeNetwork net;
        net.latency_s = links_.empty() ? 0 : links_[0].spec.latency_s;
        net.bytes_per_s = links_.empty() ? 1e10 : links_[0].spec.bytes_per_s;
        net.bytes_per_element = c_.bytes_in + c_.bytes_out;
        net.min_gain_s = 2 * c_.report_period_s;
        const double at = std::max(e.at, coordinator_free_) +
                          charged(result_.coordinator_s, [&] { moves = plan_moves(state_, net, rules_); });
        coordinator_free_ = at;
        ++result_.coordinator_calls;
        for (const ShareMove &m : moves) {
            // Until their next reports, the coordinator counts the move as made.
            NodeState &from = state_[static_cast<size_t>(m.from)], &to = state_[static_cast<size_t>(m.to)];
            from.moving = to.moving = true;
            from.remaining -= std::min(from.remaining, m.count);
            to.remaining += m.count;
            Event g;
            g.move = next_move_++;
            g.unit = m.to;
            g.range = {0, m.count};
            moves_[g.move] = {m.from, m.to};
            push(at + rank0_.spec.latency_s + links_[static_cast<size_t>(m.from)].spec.latency_s, Kind::Give, m.from,
                 g);
        }
    }

    bool owns(const Domain &d, const Block &b) const
    {
        for (const Block &o : d.owned)
            if (b.offset >= o.offset && b.offset + b.count <= o.offset + o.count)
                return true;
        return false;
    }

    void settle_move(uint64_t move, bool from, bool to)
    {
        auto it = moves_.find(move);
        if (it == moves_.end())
            return;
        if (from)
            state_[static_cast<size_t>(it->second.first)].moving = false;
        if (to)
            state_[static_cast<size_t>(it->second.second)].moving = false;
    }

    void give(Domain &d, Event &e)
    {
        const int to = e.unit;
        Block tail;
        if (owns(d, d.dispatcher->back()) && !domains_[static_cast<size_t>(to)].failed)
            tail = d.dispatcher->take_tail(e.range.count);
        if (tail.count == 0) {
            settle_move(e.move, true, true);
            return;
        }
        ++result_.moves;
        d.handed -= tail.count;
        const double bytes = c_.bytes_in * static_cast<double>(tail.count);
        result_.moved_bytes += bytes;
        if (d.node == 0 || to == 0)
            result_.rank0_bytes += bytes;
        const double arrive = send(e.at, bytes, links_[static_cast<size_t>(d.node)], &links_[static_cast<size_t>(to)]);
        settle_move(e.move, true, false);
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
        const double ready = std::max(e.at, d.planner_free) + charged(result_.planning_s, [&] {
                                 next = d.dispatcher->add_range(e.range.offset, e.range.count);
                             });
        d.planner_free = ready;
        accept(domain, next, ready);
        start_idle(domain, ready);
        schedule_report(domain, e.at);
    }

    void take(Domain &d, Event &e)
    {
        settle_move(e.move, false, true);
        d.borrowed[e.move] = {e.unit, e.range, 0};
        add_work(d, e);
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
        push(t + 2 * c_.report_period_s, Kind::Detect, d.node);
    }

    void detect(Event &e)
    {
        Domain &f = domains_[static_cast<size_t>(e.domain)];
        NodeState &s = state_[static_cast<size_t>(e.domain)];
        s.failed = true;
        s.remaining = 0;
        s.in_flight = 0;
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
        double total_rate = 0;
        for (size_t n = 0; n < domains_.size(); ++n)
            if (!domains_[n].failed && !state_[n].failed && state_[n].pus > 0) {
                live.push_back(static_cast<int>(n));
                total_rate += std::max(state_[n].rate, 1e-9);
            }
        if (live.empty())
            throw std::invalid_argument("every node failed: the job cannot end");
        // Lost ranges, cut in proportion to the live nodes' rates; each reads its part's
        // inputs again over its own link.
        uint64_t lost_total = 0;
        for (const Block &b : lost)
            lost_total += b.count;
        size_t li = 0;
        uint64_t given = 0, quota = 0;
        auto quota_of = [&](size_t i) {
            return static_cast<uint64_t>(static_cast<double>(lost_total) *
                                         std::max(state_[static_cast<size_t>(live[i])].rate, 1e-9) / total_rate);
        };
        quota = quota_of(0);
        for (const Block &b : lost) {
            uint64_t off = b.offset, left = b.count;
            while (left > 0) {
                uint64_t take = li + 1 == live.size() ? left : std::min(left, quota > given ? quota - given : 0);
                take = take / rules_.granule * rules_.granule;
                if (take < rules_.min_block || left - take < rules_.min_block)
                    take = li + 1 == live.size() || take == 0 ? left : take;
                if (take == 0) {
                    ++li;
                    given = 0;
                    quota = quota_of(li);
                    continue;
                }
                const int n = live[li];
                Domain &d = domains_[static_cast<size_t>(n)];
                const double bytes = c_.bytes_in * static_cast<double>(take);
                result_.moved_bytes += bytes;
                if (n == 0)
                    result_.rank0_bytes += bytes;
                result_.redone_elements += take;
                ++d.incoming;
                Event r;
                r.range = {off, take};
                push(send(e.at, bytes, links_[static_cast<size_t>(n)], nullptr), Kind::Reread, n, r);
                off += take;
                left -= take;
                given += take;
                if (given >= quota && li + 1 < live.size()) {
                    ++li;
                    given = 0;
                    quota = quota_of(li);
                }
            }
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
    std::vector<NodeState> state_;  // what the coordinator knows
    std::map<uint64_t, std::pair<int, int>> moves_;
    uint64_t next_move_ = 0;
    double last_decision_ = -1e300;
    double coordinator_free_ = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    uint64_t seq_ = 0;
    ClusterResult result_;
};

}  // namespace

double cluster_bound(const ClusterScenario &cluster)
{
    // A lower bound: slowdowns that start later and failures are left out.
    std::vector<SimulatedUnit> units;
    for (const ClusterNode &n : cluster.nodes)
        for (const UnitSpec &u : n.units)
            units.emplace_back(u);
    return bound_of(units, cluster.workload);
}

ClusterResult simulate_cluster(const ClusterScenario &cluster, ClusterMode mode, const PlannerMaker &make_planner,
                               const ClusterOptions &options)
{
    ClusterResult r = ClusterSimulation(cluster, mode, make_planner, options).run();
    r.bound_s = cluster_bound(cluster);
    return r;
}

}  // namespace hetpu::sim
