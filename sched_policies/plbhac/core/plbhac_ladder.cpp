// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_ladder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sched_policies/plbhac/core/plbhac_warm_start.h"

namespace hetpu {

namespace {

constexpr double kProbeDivisor = 1024;  // the probe: an even share over this
constexpr double kLadderFactor = 8;     // each rung of the ladder over the one before
constexpr int kLadderRungs = 3;         // probe included
constexpr double kLadderCap = 0.5;      // a unit's ladder: at most this many even shares
constexpr double kShareFraction = 0.6;  // of its share a unit is handed at a time
// A unit takes the rest of its share at once when it lasts under the largest of these.
constexpr double kFinalFixedCosts = 15;
constexpr double kFinalLeads = 1.5;
constexpr double kFinalOfEnd = 0.1;
constexpr double kTrust = 16;          // no block beyond this many times the largest run
constexpr double kRevokeSlack = 1.05;  // promises ending this far past the plan are taken back
constexpr double kLeadCover = 1.2;     // work kept queued: this many hand-out leads
constexpr size_t kDepth = 2;           // blocks a measured unit always has queued or running
constexpr size_t kMaxQueued = 4;       // ... and at most, to cover its lead
constexpr double kLeadShare = 0.05;    // a lead over this share of a block is worth a block queued

size_t handed_count(const std::vector<QueuedBlock> &queue)
{
    return static_cast<size_t>(
        std::count_if(queue.begin(), queue.end(), [](const QueuedBlock &b) { return b.handed; }));
}

}  // namespace

PlbhacLadderPlanner::PlbhacLadderPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules,
                                         const PlbhacOptions &options)
    : rules_(rules), options_(options)
{
    for (auto &w : workers) {
        PlbhacLadderUnit u;
        u.info = std::move(w);
        units_.push_back(std::move(u));
    }
    const uint64_t g = std::max<uint64_t>(1, rules_.granule);
    const double even = static_cast<double>(rules_.total) / static_cast<double>(std::max<size_t>(1, units_.size()));
    probe_ = static_cast<uint64_t>(even / kProbeDivisor) / g * g;
    probe_ = std::max({probe_, g, rules_.min_block});
    if (options_.memory)
        warm_ = seed_from(*options_.memory);
}

// Every unit needs a model, or none starts from one: the common end time is only as good as
// its slowest guess, and a unit without a model is learnt by the ladder.
bool PlbhacLadderPlanner::seed_from(const PlbhacMemory &memory)
{
    std::vector<const PlbhacPuMemory *> found;
    for (const PlbhacLadderUnit &u : units_) {
        const PlbhacPuMemory *m = nullptr;
        for (const PlbhacPuMemory &c : memory.pus)
            if (c.worker == u.info.id && c.exec.size() > 0)
                m = &c;
        if (!m)
            return false;
        found.push_back(m);
    }
    if (units_.empty())
        return false;
    for (size_t i = 0; i < units_.size(); ++i) {
        const PlbhacPuMemory &m = *found[i];
        double lo = m.size_lo, hi = m.size_hi;
        if (!(lo > 0) || !(hi >= lo)) {
            lo = hi = 0;
            for (const auto &[x, t] : m.exec.points()) {
                lo = lo > 0 ? std::min(lo, x) : x;
                hi = std::max(hi, x);
            }
        }
        PlbhacLadderUnit &u = units_[i];
        for (double x : hi > lo ? std::vector<double>{lo, hi} : std::vector<double>{hi}) {
            const double t = m.exec.predict(x) + m.transfer.predict(x);
            if (x > 0 && std::isfinite(t) && t > 0)
                u.seed.emplace_back(x, t);
        }
        if (u.seed.empty())
            return false;
        // Its hand-out lead, as its blocks showed it: the least any of them waited beyond its
        // own time, of those that waited at all (one queued behind a running block waits
        // microseconds; a longer wait was a stall). Under 0.1 ms a lead does not matter.
        for (double v : m.latency)
            if (std::isfinite(v) && v > 1e-4)
                u.fit.note_lead(v);
    }
    // What the models were fitted on stays in them (rescaled with the seed), so that the
    // models this run saves rest on more than its own few blocks.
    for (size_t i = 0; i < units_.size(); ++i) {
        units_[i].exec = found[i]->exec.points();
        units_[i].transfer = found[i]->transfer.points();
    }
    for (PlbhacLadderUnit &u : units_)
        for (const auto &[x, t] : u.seed)
            u.fit.add(x, t);
    return true;
}

// The unit's first block of this run against its model: the model's times scaled by how far
// the block missed them (a node twice as slow as when the models were saved doubles them).
void PlbhacLadderPlanner::rescale_seed(PlbhacLadderUnit &u, double count, double seconds)
{
    u.seed_rescaled = true;
    const double predicted = u.fit.expected_s(count);
    if (!(predicted > 0) || !(seconds > 0))
        return;
    const double scale = std::clamp(seconds / predicted, 0.2, 5.0);
    for (auto &[x, t] : u.exec)
        t *= scale;
    PlbhacUnitFit fit;
    if (u.fit.lead_known())
        fit.note_lead(u.fit.lead_s());
    for (auto &[x, t] : u.seed) {
        t *= scale;
        fit.add(x, t);
    }
    u.fit = fit;
}

PlbhacLadderPlanner::~PlbhacLadderPlanner()
{
    if (!options_.memory && !options_.on_learnt)
        return;
    PlbhacMemory m;
    for (const PlbhacLadderUnit &u : units_) {
        if (u.exec.empty())
            return;  // a unit that measured nothing: an earlier job's models are worth more
        PlbhacPuMemory pu;
        pu.worker = u.info.id;
        pu.exec.restore(u.exec);
        pu.transfer.restore(u.transfer);
        pu.size_lo = pu.size_hi = u.exec.front().first;
        for (const auto &[x, t] : u.exec) {
            pu.size_lo = std::min(pu.size_lo, x);
            pu.size_hi = std::max(pu.size_hi, x);
        }
        // The recent ones only, as the planner that reads them keeps them.
        const auto recent = [](const std::vector<double> &v) {
            return std::vector<double>(v.end() - static_cast<std::ptrdiff_t>(std::min<size_t>(v.size(), 64)), v.end());
        };
        pu.latency = recent(u.latencies);
        pu.misses = recent(u.misses);
        m.pus.push_back(std::move(pu));
    }
    if (options_.on_learnt) {
        try {
            options_.on_learnt(m);
        } catch (...) {
            // Saving is a convenience: the run's result is unaffected by a failed save.
        }
    }
    if (options_.memory)
        *options_.memory = std::move(m);
}

PlbhacLadderUnit *PlbhacLadderPlanner::find(int worker)
{
    for (auto &u : units_)
        if (u.info.id == worker)
            return &u;
    return nullptr;
}

const PlbhacLadderUnit *PlbhacLadderPlanner::unit(int worker) const
{
    return const_cast<PlbhacLadderPlanner *>(this)->find(worker);
}

double PlbhacLadderPlanner::expected_s(int worker, uint64_t count) const
{
    const PlbhacLadderUnit *u = unit(worker);
    return u && u->fit.measured() ? u->fit.expected_s(static_cast<double>(count)) : -1;
}

double PlbhacLadderPlanner::lead_s(int worker) const
{
    const PlbhacLadderUnit *u = unit(worker);
    return u ? u->fit.lead_s() : 0;
}

void PlbhacLadderPlanner::block_done(const BlockDone &done)
{
    PlbhacLadderUnit *u = find(done.worker);
    if (!u || done.count == 0)
        return;
    const double x = static_cast<double>(done.count);
    const double d = std::max(0.0, done.exec_s) + std::max(0.0, done.transfer_s);
    const bool first = !u->fit.measured();
    const double predicted = first ? 0.0 : u->fit.expected_s(x);
    if (!u->seed.empty() && !u->seed_rescaled && !done.backup)
        rescale_seed(*u, x, std::max(0.0, done.exec_s) + std::max(0.0, done.transfer_s));
    double waited = 0;
    // The saved models' straggle record (plbhac_warm_start.h): how far each block missed
    // its unit's fit before it was refitted with it.
    if (u->fit.measured() && !u->fit.one_size() && u->fit.expected_s(x) > 0 && d > 0)
        u->misses.push_back(std::log(d / u->fit.expected_s(x)));
    u->fit.add(x, d);
    if (done.exec_s > 0)
        u->exec.emplace_back(x, done.exec_s);
    if (done.transfer_s > 0)
        u->transfer.emplace_back(x, done.transfer_s);
    // What the block waited beyond its own time once its unit was free: its lead when it
    // was handed to an idle unit (the smallest seen is the unit's lead), else the part of the
    // lead its unit's previous block did not hide (what the saved models call its latency).
    if (done.submitted_s >= 0) {
        waited = std::max(0.0, done.end_s - std::max(done.submitted_s, u->last_end_s) - d);
        if (done.submitted_s >= u->last_end_s)
            u->fit.note_lead(waited);
        u->latencies.push_back(waited);
    }
    u->last_end_s = std::max(u->last_end_s, done.end_s);
    if (on_trace)
        on_trace({done.end_s, done.worker, u->info.name, done.count, predicted, d + waited,
                  done.backup ? "backup" : (first ? "ladder" : "execution"), 0, u->fit.lead_s(), 0.0,
                  std::max(0.0, done.exec_s), std::max(0.0, done.transfer_s), waited});
    if (first && std::all_of(units_.begin(), units_.end(), [](const PlbhacLadderUnit &v) { return v.fit.measured(); }))
        measured_all_s_ = done.end_s;
}

// The probe on every unit, and the ladder's promises behind it cut from the end of the job,
// rung by rung and kind by kind, so that what a kind gives back merges into one range.
// Accelerators, whose blocks wait for a hand-out lead, also get their second rung handed
// out at once; a CPU's next block waits for its probe.
void PlbhacLadderPlanner::start(UnitQueues &q)
{
    const uint64_t g = std::max<uint64_t>(1, rules_.granule);
    const double even = static_cast<double>(q.unassigned()) / static_cast<double>(std::max<size_t>(1, units_.size()));
    const double cap = std::max(static_cast<double>(probe_), kLadderCap * even);
    std::vector<size_t> order(units_.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return units_[a].info.kind < units_[b].info.kind; });
    std::vector<double> total(units_.size(), 0);
    for (auto &u : units_)
        total[static_cast<size_t>(&u - units_.data())] = static_cast<double>(q.promise(u.info.id, probe_, false));
    double rung = static_cast<double>(probe_);
    for (int level = 1; level < kLadderRungs; ++level) {
        rung *= kLadderFactor;
        for (size_t i : order) {
            double x = std::min(rung, cap - total[i]);
            if (x < static_cast<double>(g))
                continue;
            total[i] += static_cast<double>(q.promise(units_[i].info.id, static_cast<uint64_t>(x), true));
        }
    }
    for (auto &u : units_) {
        q.hand_out_next(u.info.id);
        if (u.info.kind != WorkerKind::Cpu)
            q.hand_out_next(u.info.id);
    }
}

void PlbhacLadderPlanner::refresh_planning_fits()
{
    planning_fits_.assign(units_.size(), nullptr);
    std::map<WorkerKind, std::vector<size_t>> measured;
    for (size_t u = 0; u < units_.size(); ++u)
        if (units_[u].fit.measured())
            measured[units_[u].info.kind].push_back(u);
    std::map<WorkerKind, const PlbhacUnitFit *> typical;
    for (auto &[kind, us] : measured) {
        auto mid = us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2);
        std::nth_element(us.begin(), mid, us.end(), [&](size_t a, size_t b) {
            return units_[a].fit.per_element_s() < units_[b].fit.per_element_s();
        });
        typical[kind] = &units_[*mid].fit;
    }
    for (size_t u = 0; u < units_.size(); ++u) {
        auto t = typical.find(units_[u].info.kind);
        planning_fits_[u] = units_[u].fit.measured() ? &units_[u].fit : t != typical.end() ? t->second : nullptr;
    }
}

double PlbhacLadderPlanner::committed_end(const UnitQueues &q, size_t u) const
{
    if (!planning_fits_[u])
        return -1;
    const PlbhacUnitFit &fit = *planning_fits_[u];
    const double now = q.now_s(), lead = fit.lead_s();
    const double busy = q.busy_until_s(units_[u].info.id);  // an earlier job's copy runs first
    double t = std::max(now, busy);
    for (const QueuedBlock &b : q.queue(units_[u].info.id)) {
        const double c = fit.expected_s(static_cast<double>(b.count));
        if (b.started)
            t = std::max(now + 0.25 * c, std::max({b.started_s, b.handed_s + lead, busy}) + c);
        else if (b.handed)
            t = std::max(t, b.handed_s + lead) + c;
        else
            t = std::max(t, now + lead) + c;
    }
    return t;
}

double PlbhacLadderPlanner::queued_s(const UnitQueues &q, size_t u) const
{
    const double end = committed_end(q, u);
    return end < 0 ? 0 : end - q.now_s();
}

// The common end time of `elements` more over the measured units (water-filling: each
// unit takes (T - s) / b from its start s on, T the same for all).
PlbhacLadderPlanner::Plan PlbhacLadderPlanner::solve(const UnitQueues &q, uint64_t elements) const
{
    Plan p;
    p.shares.assign(units_.size(), 0);
    struct Start {
        double s, b;
        size_t u;
    };
    std::vector<Start> starts;
    for (size_t u = 0; u < units_.size(); ++u) {
        if (!planning_fits_[u])
            continue;
        const PlbhacUnitFit &fit = *planning_fits_[u];
        const double ce = committed_end(q, u);
        if (ce < 0)
            continue;
        starts.push_back({std::max(ce, q.now_s() + fit.lead_s()) + fit.fixed_s(), fit.per_element_s(), u});
    }
    if (starts.empty() || elements == 0)
        return p;
    std::sort(starts.begin(), starts.end(), [](const Start &a, const Start &b) { return a.s < b.s; });
    const double r = static_cast<double>(elements);
    double inv = 0, weighted = 0, end = 0;
    for (size_t k = 0; k < starts.size(); ++k) {
        inv += 1 / starts[k].b;
        weighted += starts[k].s / starts[k].b;
        end = (r + weighted) / inv;
        if (k + 1 == starts.size() || end <= starts[k + 1].s)
            break;
    }
    const double g = static_cast<double>(std::max<uint64_t>(1, rules_.granule));
    bool any = false;
    for (const Start &s : starts) {
        const double x = (end - s.s) / s.b;
        if (x >= g) {
            p.shares[s.u] = x;
            any = true;
        }
    }
    if (!any) {
        // Every share under a granule: the granules go one by one to whichever unit would end
        // its next one first (all of them to one unit would end late, and be taken back).
        end = 0;
        for (double left = r; left > 0;) {
            const double x = std::min(g, left);
            const Start *best = nullptr;
            double best_end = 0;
            for (const Start &s : starts) {
                const double e = s.s + s.b * (p.shares[s.u] + x);
                if (!best || e < best_end) {
                    best = &s;
                    best_end = e;
                }
            }
            p.shares[best->u] += x;
            end = std::max(end, best_end);
            left -= x;
        }
    }
    p.valid = true;
    p.end_s = end;
    return p;
}

uint64_t PlbhacLadderPlanner::cap(size_t u) const
{
    const PlbhacUnitFit &fit = units_[u].fit;
    double trust = kTrust;
    if (fit.fixed_s() > fit.per_element_s() * fit.largest())  // time still mostly fixed: extrapolating is cheap
        trust *= trust;
    return static_cast<uint64_t>(trust * fit.largest());
}

// Promises (and withdrawable hand-outs) that would end after the plan's end go back, the
// latest first, until the plan stops moving; a unit still in its first block is judged at the best rate it can still show.
void PlbhacLadderPlanner::revoke_late(UnitQueues &q)
{
    const uint64_t g = std::max<uint64_t>(1, rules_.granule);
    Plan p;
    for (int round = 0; round < 3; ++round) {
        p = solve(q, std::max(q.unassigned(), g));
        if (!p.valid)
            return;
        bool changed = false;
        for (size_t u = 0; u < units_.size(); ++u) {
            const PlbhacUnitFit &fit = units_[u].fit;
            if (!fit.measured())
                continue;
            if (fit.one_size() && fit.expected_s(fit.largest()) <= fit.lead_s())
                continue;  // its lead hides its rate: nothing to judge its queue by yet
            const int id = units_[u].info.id;
            while (q.can_revoke_last(id) && committed_end(q, u) > p.end_s * kRevokeSlack)
                changed |= q.revoke_last(id);
        }
        if (!changed)
            break;
    }
    revoke_unmeasured(q, p.end_s);
}

void PlbhacLadderPlanner::revoke_unmeasured(UnitQueues &q, double end_s)
{
    const double now = q.now_s();
    for (const PlbhacLadderUnit &u : units_) {
        if (u.fit.measured())
            continue;
        const std::vector<QueuedBlock> &queue = q.queue(u.info.id);
        if (queue.empty() || !queue.front().started || now <= queue.front().started_s)
            continue;
        const double best_rate = static_cast<double>(queue.front().count) / (now - queue.front().started_s);
        double t = now;
        size_t keep = 1;
        while (keep < queue.size()) {
            t += static_cast<double>(queue[keep].count) / best_rate;
            if (t > end_s * kRevokeSlack)
                break;
            ++keep;
        }
        while (q.queue(u.info.id).size() > keep && q.revoke_last(u.info.id)) {
        }
    }
}

// Tops a measured unit's queue up with a fraction of its planned share at a time.
void PlbhacLadderPlanner::issue(UnitQueues &q, size_t u)
{
    const PlbhacUnitFit &fit = units_[u].fit;
    const int id = units_[u].info.id;
    const double g = static_cast<double>(std::max<uint64_t>(1, rules_.granule));
    const double lead = fit.lead_s();
    while (q.unassigned() > 0) {
        const size_t n = q.queue(id).size();
        if (!(n < kDepth || (n < kMaxQueued && queued_s(q, u) < kLeadCover * lead)))
            return;
        const double r = static_cast<double>(q.unassigned());
        const Plan p = solve(q, q.unassigned());
        double x = p.valid ? p.shares[u] : 0;
        if (x <= 0)
            return;
        const double a = fit.fixed_s(), b = fit.per_element_s();
        const double final_under =
            std::max({kFinalFixedCosts * std::max(a, 1e-6), kFinalLeads * lead, kFinalOfEnd * p.end_s});
        if (b * x > final_under)
            x = std::min(std::max(x * kShareFraction, b > 0 ? (final_under - a) / b : x), p.shares[u]);
        x = std::min(x, static_cast<double>(cap(u)));
        if (r - x < g)
            x = r;
        if (q.promise(id, static_cast<uint64_t>(std::max(x, g)), false) == 0)
            return;
    }
}

// Hands the runner what a unit needs to stay busy, and no more: what is handed out starts
// its hand-out lead, and is committed once its unit takes it (at once where the runner cannot
// withdraw blocks). Its first promise when idle; once measured, the next one while what it holds
// ends within its hand-out lead, or, when its lead is a noticeable part of the next block's
// time, one block behind the running one (waiting for the end would idle it that long).
void PlbhacLadderPlanner::hand_out(UnitQueues &q, size_t u)
{
    const PlbhacUnitFit &fit = units_[u].fit;
    const int id = units_[u].info.id;
    for (;;) {
        const std::vector<QueuedBlock> &queue = q.queue(id);
        auto next = std::find_if(queue.begin(), queue.end(), [](const QueuedBlock &b) { return !b.handed; });
        if (next == queue.end())
            return;
        const size_t handed = handed_count(queue);
        bool more = handed == 0;
        if (!more && fit.measured()) {
            double end = q.now_s();
            for (const QueuedBlock &b : queue) {
                if (!b.handed)
                    break;
                const double c = fit.expected_s(static_cast<double>(b.count));
                end = b.started ? std::max(end, b.started_s + c) : std::max(end, b.handed_s + fit.lead_s()) + c;
            }
            const double lead = fit.lead_s();
            const bool lead_matters = lead > kLeadShare * fit.expected_s(static_cast<double>(next->count));
            more = handed < kMaxQueued && (end - q.now_s() < kLeadCover * lead || (handed < kDepth && lead_matters));
        }
        if (!more || !q.hand_out_next(id))
            return;
    }
}

void PlbhacLadderPlanner::plan(UnitQueues &q)
{
    if (!started_) {
        started_ = true;
        if (!warm_) {
            start(q);
            return;
        }
    }
    refresh_planning_fits();
    revoke_late(q);
    for (size_t u = 0; u < units_.size(); ++u)
        if (units_[u].fit.measured())
            issue(q, u);
    for (size_t u = 0; u < units_.size(); ++u)
        hand_out(q, u);
}

}  // namespace hetpu
