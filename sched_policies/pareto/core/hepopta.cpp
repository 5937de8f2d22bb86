// SPDX-License-Identifier: LGPL-2.1-or-later
// HEPOPTA following the HEPOPTA paper (Algorithms 1, 2 and 8-13, with the erratum in docs/design.md, "HEPOPTA Algorithm 2 leaf case (erratum)", for
// Algorithm 2's leaf case), reorganised for speed without changing what is computed. The
// paper's solution tree memoises, per node, the Pareto set of the ways to place a given
// workload on a range of processors; here those sets are built level by level in a flat
// table, cell (c, s) holding the ways to place s granules on processors 0..c-1, and the
// answer is cell (p, n). Everything below keeps the front exact:
//
//  * Thresholds (the paper's eps and Figure 12, plus a time threshold): eps is the dynamic
//    energy of HPOPTA's solution, tau the makespan of the minimum-energy distribution.
//    Anything dearer than eps is dominated by HPOPTA's solution, anything slower than tau
//    by the minimum-energy one, so points beyond either are never used.
//  * The thresholds are applied per cell, not only per point: cell (c, s) leaves n - s
//    granules to processors c..p-1, which cost at least E(c, n-s) and take at least
//    T(c, n-s) (SuffixBounds). A partial solution of energy e is dropped when
//    e + E(c, n-s) > eps, and partial times are clamped up to max(t_opt, T(c, n-s)): the
//    rest is at least that slow, so the clamp never changes a complete distribution's
//    makespan, while all partial solutions faster than it collapse onto the cheapest of
//    them. The bounds depend on the cell only, so every use of a cell sees the same set.
//  * Times are replaced by their rank among the distinct profile times (a makespan is
//    always one of them), and a cell's set is the staircase of r -> lexicographic minimum
//    of (energy, active count) over partial solutions of time rank <= r. That is exactly
//    the paper's set under its tie rule made exact: a partial solution Q removes P only if
//    t_Q <= t_P and (e_Q < e_P, or e_Q == e_P and k_Q <= k_P). Pruning on (time, energy)
//    alone could discard the sub-solution that gives the fewest-active tie (A = (e, 5 s,
//    3 procs) vs B = (e, 4 s, 5 procs): behind a 6 s processor both give the same time and
//    energy), which is why k is part of the key.
//  * Merging (Algorithm 12) becomes bucketing: each candidate is written into a dense
//    array indexed by its rank (O(1), no search, no insertion), and one pass over the
//    touched ranks, found through a bitmap, emits the staircase. A parent staircase stops
//    contributing after its first entry no slower than processor c-1's point, since later
//    entries only cost more at that same clamped time (Algorithm 12 line 58).
//  * Within a cell, processor c-1's points are merged in increasing time, so a point's
//    candidates all land at ranks >= its own: the ranks below it already hold their final
//    candidates, and a candidate their minimum beats is dropped before it is written (the
//    rest of its parent set is worse still, so the walk stops there).
//  * Known complete solutions cap each rank's energy: a partial solution of energy e at
//    rank r is dropped when e + E(c, n-s) exceeds the least energy of a known solution
//    no slower than r (every completion is strictly dearer and no faster). The known
//    solutions come from the same search over coarser point sets (every 16th, then every
//    4th point of each processor, plus HPOPTA's sizes so that n stays reachable): their
//    fronts are real solutions, cheap to find, and close to the final front. The last
//    pass uses every point, so nothing is lost; strict comparisons keep equal-figure
//    solutions alive for the fewest-active tie rule.
//  * Cells are filled forward, processor 0 first, so a partial energy is the sum in
//    processor order that evaluate_distribution() reports, and every tie is decided on the
//    reported numbers. Entries sit in one flat arena (24 bytes each) with per-cell offsets,
//    and point to their parent entry by index (Algorithm 13 follows them back).
#include "sched_policies/pareto/core/hepopta.h"

#include "sched_policies/pareto/core/hpopta.h"
#include "sched_policies/pareto/core/min_energy.h"
#include "sched_policies/pareto/core/pareto_front.h"
#include "sched_policies/pareto/core/suffix_bounds.h"
#include "sched_policies/pareto/core/workspace_buffers.h"

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <limits>

namespace hetpu {

namespace {

using detail::ProfileTable;
using detail::SuffixBounds;

// The table's records (workspace_buffers.h): a partial solution of cell (c, s), the
// paper's <eng, time, part, P#, key>; where a cell's entries are; a usable point.
using Entry = detail::KernelEntry;
using Cell = detail::KernelCell;
using Point = detail::KernelPoint;

class Kernel {
public:
    // Uses the usable points whose index among their processor's (by size) is a multiple
    // of `stride`, plus the sizes in `keep` (HPOPTA's solution, so that n stays reachable).
    // Every distribution in `incumbents` is a known complete solution: a partial one whose
    // every completion is strictly dearer than an incumbent no slower is dropped.
    // Its arrays live in `scratch` (a workspace's), reset here: only capacity carries over.
    Kernel(const ProfileTable &tab, const SuffixBounds &bounds, double t_opt, double eps, double tau, int stride,
           const std::vector<Granules> &keep, const std::vector<Distribution> &incumbents, ParetoStats &stats,
           detail::KernelScratch &scratch)
        : tab_(tab), p_(tab.procs()), n_(tab.workload()), eps_(widen(eps, p_)), bounds_(bounds), stats_(stats),
          times_(scratch.times), points_(scratch.points), lo_(scratch.lo), hi_(scratch.hi),
          cell_base_(scratch.cell_base), cells_(scratch.cells), arena_(scratch.arena), stage_(scratch.stage),
          best_(scratch.best), touched_(scratch.touched), cap_(scratch.cap)
    {
        arena_.clear();
        stage_.clear();
        // Usable points (Figure 12: nothing dearer than eps or slower than tau), ranked.
        times_.clear();
        times_.push_back(0.0);
        for (int c = 0; c < p_; ++c)
            for (const auto &[x, x_time, x_energy] : tab_.points(c))
                if (usable(x_time, x_energy, tau))
                    times_.push_back(x_time);
        std::sort(times_.begin(), times_.end());
        times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
        r_opt_ = rank(t_opt);
        points_.resize(p_);
        for (std::vector<Point> &pts : points_)
            pts.clear();
        lo_.assign(p_ + 1, 0);
        hi_.assign(p_ + 1, 0);
        Granules prefix = 0;
        std::vector<Granules> big(p_, 0);
        for (int c = 0; c < p_; ++c) {
            points_[c].push_back(Point{0, 0, 0.0});
            int index = 0;
            for (const auto &[x, x_time, x_energy] : tab_.points(c))
                if (usable(x_time, x_energy, tau) && (index++ % stride == 0 || x == keep[c])) {
                    points_[c].push_back(Point{static_cast<std::int32_t>(x), rank(x_time), x_energy});
                    big[c] = x;
                }
            std::sort(points_[c].begin(), points_[c].end(),
                      [](const Point &a, const Point &b) { return a.r < b.r || (a.r == b.r && a.x < b.x); });
            prefix += big[c];
            hi_[c + 1] = std::min(n_, prefix);
        }
        // Cell (c, s) can still be completed only if s >= n - (largest sizes of c..p-1).
        Granules suffix = 0;
        for (int c = p_; c >= 0; --c) {
            lo_[c] = std::max<Granules>(0, n_ - suffix);
            if (c > 0)
                suffix += big[c - 1];
        }
        cell_base_.assign(p_ + 2, 0);
        for (int c = 0; c <= p_; ++c)
            cell_base_[c + 1] = cell_base_[c] + static_cast<std::size_t>(std::max<Granules>(0, hi_[c] - lo_[c] + 1));
        cells_.assign(cell_base_[p_ + 1], Cell{0, 0, std::numeric_limits<double>::infinity()});
        const std::size_t ranks = times_.size();
        best_.assign(ranks, Entry{std::numeric_limits<double>::infinity(), 0, 0, 0, 0});
        touched_.assign(ranks / 64 + 1, 0);
        // cap_[r]: the least energy of a known solution no slower than rank r.
        std::vector<std::pair<double, double>> known;  // (time, widened energy)
        for (const Distribution &d : incumbents)
            known.emplace_back(d.time_s, widen(d.dynamic_energy_j, p_));
        std::sort(known.begin(), known.end());
        cap_.assign(ranks, eps_);
        double least = eps_;
        std::size_t next = 0;
        for (std::size_t r = 0; r < ranks; ++r) {
            for (; next < known.size() && known[next].first <= times_[r]; ++next)
                least = std::min(least, known[next].second);
            cap_[r] = least;
        }
    }

    // Fills the table; returns the entries of cell (p, n), sorted by (energy, active count),
    // hence by decreasing time.
    std::vector<Entry> solve()
    {
        if (lo_[0] > 0 || hi_[p_] < n_)
            return {};                              // the usable points cannot add up to n
        arena_.push_back(Entry{0.0, 0, 0, -1, 0});  // cell (0, 0): nothing placed
        cells_[0] = Cell{0, 1, 0.0};
        for (int c = 1; c <= p_; ++c)
            for (Granules s = lo_[c]; s <= hi_[c]; ++s)
                fill(c, s);
        const std::size_t cell = cell_index(p_, n_);
        return std::vector<Entry>(arena_.begin() + cells_[cell].off,
                                  arena_.begin() + cells_[cell].off + cells_[cell].len);
    }

    // Follows the parent indices from a complete entry back to its distribution
    // (Algorithm 13, BuildParetoSols).
    std::vector<Granules> distribution(const Entry &last) const
    {
        std::vector<Granules> sizes(p_, 0);
        const Entry *e = &last;
        Granules s = n_;
        for (int c = p_; c >= 1; --c) {
            sizes[c - 1] = e->part;
            s -= e->part;
            e = &arena_[cells_[cell_index(c - 1, s)].off + static_cast<std::size_t>(e->parent)];
        }
        return sizes;
    }

    // What this pass's table holds (its size: the arena's capacity may be a previous call's).
    std::size_t arena_bytes() const { return arena_.size() * sizeof(Entry); }

    // Sums of up to 2p non-negative terms carry a relative rounding error below
    // 2p * DBL_EPSILON; widening energy thresholds by more keeps a solution whose energy
    // is the threshold from being pruned when the bounds sum its parts in another order.
    static double widen(double energy, int p) { return energy * (1.0 + 8.0 * p * DBL_EPSILON); }

private:
    bool usable(double time, double energy, double tau) const { return energy <= eps_ && time <= tau; }

    std::int32_t rank(double t) const
    {
        return static_cast<std::int32_t>(std::lower_bound(times_.begin(), times_.end(), t) - times_.begin());
    }

    std::size_t cell_index(int c, Granules s) const { return cell_base_[c] + static_cast<std::size_t>(s - lo_[c]); }

    void fill(int c, Granules s)
    {
        const Granules rest = n_ - s;
        const double suffix_e = bounds_.min_energy(c, rest);
        if (!(suffix_e <= eps_))
            return;  // infinite (processors c.. cannot take the rest) or beyond eps: empty
        const std::int32_t floor_r = std::max(r_opt_, rank(bounds_.min_time(c, rest)));
        if (suffix_e > cap_[floor_r])
            return;  // every completion is dearer than a solution at least as fast
        ++stats_.cells_built;
        std::int64_t cuts = 0, candidates = 0;  // locals: the loop below is the hot one
        std::size_t wmin = touched_.size(), wmax = 0;
        // Points come in increasing time, so a point's candidates all land at ranks >= its
        // own rank rx, and so do those of every later point: by then the ranks below rx
        // hold their final candidates. (me, mk) is their lexicographic minimum, folded in
        // as rx advances; whatever it beats is dominated in the finished cell.
        double me = std::numeric_limits<double>::infinity();
        std::int32_t mk = std::numeric_limits<std::int32_t>::max();
        std::int32_t folded = floor_r;  // ranks < folded are in (me, mk)
        for (const Point &pt : points_[c - 1]) {
            const Granules from = s - pt.x;
            if (from < lo_[c - 1] || from > hi_[c - 1])
                continue;
            const Cell &pc = cells_[cell_index(c - 1, from)];
            const std::int32_t rx = std::max(floor_r, pt.r);
            // The parent's cheapest entry bounds all of its candidates: one load rejects
            // most points without touching the arena.
            if (pc.min_e + pt.e + suffix_e > cap_[rx]) {
                ++cuts;
                continue;
            }
            const Entry *par = arena_.data() + pc.off;
            const std::uint32_t len = pc.len;
            if (rx > folded) {
                fold(folded, rx, me, mk);
                folded = rx;
            }
            double le = me;
            std::int32_t lk = mk;
            if (best_[rx].e < le || (best_[rx].e == le && best_[rx].k < lk)) {
                le = best_[rx].e;
                lk = best_[rx].k;
            }
            const std::int32_t kx = pt.x > 0 ? 1 : 0;
            // Candidates land at ranks >= rx, where the caps are no looser than cap_[rx].
            const double cap_x = cap_[rx];
            for (std::uint32_t j = 0; j < len; ++j) {
                const double e = par[j].e + pt.e;
                const std::int32_t k = par[j].k + kx;
                if (e + suffix_e > cap_x || le < e || (le == e && lk <= k)) {
                    cuts += j == 0;
                    break;  // the parent set ascends in (energy, count): the rest is worse
                }
                ++candidates;
                const std::int32_t r = std::max(rx, par[j].r);
                if (e + suffix_e > cap_[r]) {
                    if (par[j].r <= rx)
                        break;
                    continue;
                }
                if (e < best_[r].e || (e == best_[r].e && k < best_[r].k)) {
                    best_[r].e = e;
                    best_[r].k = k;
                    best_[r].part = pt.x;
                    best_[r].parent = static_cast<std::int32_t>(j);
                    const std::size_t w = static_cast<std::size_t>(r) / 64;
                    touched_[w] |= std::uint64_t(1) << (r % 64);
                    wmin = std::min(wmin, w);
                    wmax = std::max(wmax, w);
                }
                if (par[j].r <= rx)
                    break;  // processor c-1 sets the time of every later entry
            }
        }
        stats_.cuts += cuts;
        stats_.candidates += candidates;
        // Ascending ranks: an entry survives when it beats everything at lower ranks.
        stage_.clear();
        double run_e = std::numeric_limits<double>::infinity();
        std::int32_t run_k = std::numeric_limits<std::int32_t>::max();
        for (std::size_t w = wmin; w <= wmax && w < touched_.size(); ++w) {
            for (std::uint64_t bits = touched_[w]; bits != 0; bits &= bits - 1) {
                const std::int32_t r =
                    static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
                if (best_[r].e < run_e || (best_[r].e == run_e && best_[r].k < run_k)) {
                    run_e = best_[r].e;
                    run_k = best_[r].k;
                    stage_.push_back(Entry{run_e, r, best_[r].part, best_[r].parent, run_k});
                }
                best_[r].e = std::numeric_limits<double>::infinity();
            }
            touched_[w] = 0;
        }
        const std::size_t cell = cell_index(c, s);
        cells_[cell].off = static_cast<std::uint32_t>(arena_.size());
        cells_[cell].len = static_cast<std::uint32_t>(stage_.size());
        if (!stage_.empty())
            cells_[cell].min_e = stage_.back().e;
        arena_.insert(arena_.end(), stage_.rbegin(), stage_.rend());  // ascending energy
    }

    // Folds the candidates at ranks [from, to) into the running minimum (me, mk).
    void fold(std::int32_t from, std::int32_t to, double &me, std::int32_t &mk) const
    {
        for (std::size_t w = static_cast<std::size_t>(from) / 64; w * 64 < static_cast<std::size_t>(to); ++w) {
            std::uint64_t bits = touched_[w];
            if (w == static_cast<std::size_t>(from) / 64)
                bits &= ~std::uint64_t(0) << (from % 64);
            if ((w + 1) * 64 > static_cast<std::size_t>(to))
                bits &= (std::uint64_t(1) << (to % 64)) - 1;
            for (; bits != 0; bits &= bits - 1) {
                const std::size_t r = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
                if (best_[r].e < me || (best_[r].e == me && best_[r].k < mk)) {
                    me = best_[r].e;
                    mk = best_[r].k;
                }
            }
        }
    }

    const ProfileTable &tab_;
    const int p_;
    const Granules n_;
    const double eps_;  // energy threshold, widened for rounding
    const SuffixBounds &bounds_;
    ParetoStats &stats_;
    std::vector<double> &times_;  // distinct usable times, ascending: rank -> time
    std::int32_t r_opt_ = 0;
    std::vector<std::vector<Point>> &points_;  // per processor, idle first, ascending time
    std::vector<Granules> &lo_, &hi_;          // partial sums worth a cell, per level
    std::vector<std::size_t> &cell_base_;
    std::vector<Cell> &cells_;
    std::vector<Entry> &arena_;
    std::vector<Entry> &stage_;
    // Merge scratch, indexed by time rank (one cache line per candidate written); the
    // energy is +infinity outside a merge.
    std::vector<Entry> &best_;
    std::vector<std::uint64_t> &touched_;
    std::vector<double> &cap_;  // per rank: least widened energy of a known solution that fast
};

}  // namespace

std::vector<Distribution> hepopta(const std::vector<ProcessorProfile> &profiles, Granules n, ParetoStats *stats)
{
    ParetoWorkspace workspace;
    return hepopta(profiles, n, workspace, stats);
}

std::vector<Distribution> hepopta(const std::vector<ProcessorProfile> &profiles, Granules n, ParetoWorkspace &workspace,
                                  ParetoStats *stats)
{
    validate_profiles(profiles, n);
    detail::WorkspaceBuffers &ws = workspace.buffers();
    ProfileTable &tab = ws.table;
    tab.assign(profiles, n);
    const std::vector<Granules> fastest_sizes = detail::fastest_sizes(tab, ws.fastest);
    if (fastest_sizes.empty())
        throw UnreachableWorkloadError("pareto: workload n=" + std::to_string(n) +
                                       " granules cannot be formed as a sum of one profile size (or 0) per processor");
    const Distribution fastest = evaluate_distribution(profiles, fastest_sizes);
    ParetoStats local;
    ParetoStats &st = stats ? *stats : local;
    st = ParetoStats{};
    st.t_opt_s = fastest.time_s;
    st.eps_j = fastest.dynamic_energy_j;

    // The minimum-energy distribution is within eps, so points dearer than eps cannot
    // change its makespan.
    const double eps_w = Kernel::widen(st.eps_j, tab.procs());
    const double tau = detail::min_energy_makespan(tab, eps_w, ws.min_energy);
    // Built once, shared by the passes below.
    SuffixBounds &bounds = ws.bounds;
    bounds.assign(tab, eps_w, tau);
    // Coarse passes first: the front over every 16th, then every 4th point is made of real
    // solutions, and each finer pass prunes with them (Kernel's `incumbents`); the last
    // pass uses every point, so the front is exact. Three passes cost less than the last
    // one alone would without incumbents.
    std::vector<Distribution> sols{fastest};
    for (int stride : {16, 4, 1}) {
        Kernel kernel(tab, bounds, fastest.time_s, fastest.dynamic_energy_j, tau, stride, fastest_sizes, sols, st,
                      ws.kernel);
        std::vector<Distribution> found;
        for (const Entry &last : kernel.solve())
            found.push_back(evaluate_distribution(profiles, kernel.distribution(last)));
        found.push_back(fastest);
        sols = pareto_front(std::move(found), EnergyObjective::Dynamic);
        st.table_bytes = std::max(st.table_bytes, static_cast<std::int64_t>(kernel.arena_bytes()));
    }
    // The kernel's figures are the canonical ones already; the re-filter above keeps one
    // point per front point (the staircase keeps same-energy entries for the tie rule), and
    // HPOPTA's solution is added as a safety net against rounding at the eps threshold.
    return sols;
}

std::vector<Distribution> htpopta(const std::vector<ProcessorProfile> &profiles, Granules n, double base_power_w,
                                  ParetoStats *stats)
{
    ParetoWorkspace workspace;
    return htpopta(profiles, n, base_power_w, workspace, stats);
}

std::vector<Distribution> htpopta(const std::vector<ProcessorProfile> &profiles, Granules n, double base_power_w,
                                  ParetoWorkspace &workspace, ParetoStats *stats)
{
    validate_base_power(base_power_w);
    return total_front(hepopta(profiles, n, workspace, stats), base_power_w);
}

std::vector<Distribution> total_front(std::vector<Distribution> dynamic_front, double base_power_w)
{
    validate_base_power(base_power_w);
    for (Distribution &d : dynamic_front)
        d.total_energy_j = d.dynamic_energy_j + base_power_w * d.time_s;
    return pareto_front(std::move(dynamic_front), EnergyObjective::Total);
}

}  // namespace hetpu
