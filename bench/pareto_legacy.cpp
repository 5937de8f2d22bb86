// SPDX-License-Identifier: LGPL-2.1-or-later
// The exact Pareto cores as they were before the flat-layout rewrite (hetpu commit 61768f6),
// kept verbatim, only renamed into namespace hetpu_legacy, so that bench/pareto_speed can
// measure the speed-up against them in the same run on the same instances. Not used
// anywhere else; do not fix or tune it (it is the baseline).
#include "bench/pareto_legacy.h"

#include "sched_policies/pareto/core/pareto_front.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

// ---- profile_table.h
// Dense O(1) lookup of the profiles, restricted to sizes 0..n (the paper's ReadFunc).
// Internal to the Pareto cores: HPOPTA and HEPOPTA index it by (processor, size) in their
// inner loops, where scanning the point lists would cost a factor m.

namespace hetpu_legacy {
using hetpu::Distribution;
using hetpu::EnergyObjective;
using hetpu::evaluate_distribution;
using hetpu::Granules;
using hetpu::InvalidProfileError;
using hetpu::kMaxParetoWorkload;
using hetpu::pareto_front;
using hetpu::ProcessorProfile;
using hetpu::ProfilePoint;
using hetpu::UnreachableWorkloadError;
using hetpu::validate_base_power;
namespace detail {

class ProfileTable {
public:
    // Assumes legacy_validate_profiles() passed. Points with size > n can never be used for a
    // workload n and are left out.
    ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n);

    int procs() const { return static_cast<int>(sizes_.size()); }
    Granules workload() const { return n_; }

    // Sizes usable by processor i (idle 0 excluded), ascending.
    const std::vector<Granules> &sizes(int i) const { return sizes_[i]; }

    bool has(int i, Granules x) const { return x == 0 || time_[i][x] > 0.0; }
    double time(int i, Granules x) const { return time_[i][x]; }      // 0 for idle
    double energy(int i, Granules x) const { return energy_[i][x]; }  // 0 for idle

private:
    Granules n_;
    std::vector<std::vector<Granules>> sizes_;
    // time_[i][x] > 0 marks a point: validation guarantees time > 0 for every listed size.
    std::vector<std::vector<double>> time_;
    std::vector<std::vector<double>> energy_;
};

}  // namespace detail
}  // namespace hetpu_legacy
// ---- profile_table.cpp

namespace hetpu_legacy {
namespace detail {

ProfileTable::ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n)
    : n_(n), sizes_(profiles.size()), time_(profiles.size(), std::vector<double>(static_cast<std::size_t>(n) + 1, 0.0)),
      energy_(profiles.size(), std::vector<double>(static_cast<std::size_t>(n) + 1, 0.0))
{
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        for (const ProfilePoint &pt : profiles[i].points) {
            if (pt.size <= 0 || pt.size > n)
                continue;  // idle point is implicit; oversized points are unusable
            time_[i][pt.size] = pt.time_s;
            energy_[i][pt.size] = pt.energy_j;
            sizes_[i].push_back(pt.size);
        }
        std::sort(sizes_[i].begin(), sizes_[i].end());
    }
}

}  // namespace detail
}  // namespace hetpu_legacy
// ---- prefix_bounds.h
// Lower bounds for the processors *before* a node of HEPOPTA's solution tree.
//
// Node (c, w) of the tree distributes w granules over processors c..p-1, so whatever
// complete distribution passes through it places the other r = n - w granules on
// processors 0..c-1. The cheapest and the fastest ways to do that bound every completion
// of the node, which lets HEPOPTA apply its global energy threshold eps per node (a
// partial solution of energy e is hopeless when e + min_energy(c, r) > eps) and ignore
// differences between partial times below min_time(c, r) (the prefix is at least that
// slow, so such differences never reach the makespan). Internal to the Pareto cores.

namespace hetpu_legacy {
namespace detail {

class PrefixBounds {
public:
    // Processor sizes whose energy exceeds `max_energy` or whose time exceeds `max_time`
    // are left out, as HEPOPTA leaves them out of the tree.
    PrefixBounds(const ProfileTable &tab, double max_energy, double max_time);

    // Least dynamic energy / least makespan placing exactly r granules on processors
    // 0..c-1 (c = 0..p); +infinity when that is impossible.
    double min_energy(int c, Granules r) const { return energy_[idx(c, r)]; }
    double min_time(int c, Granules r) const { return time_[idx(c, r)]; }

private:
    std::size_t idx(int c, Granules r) const { return static_cast<std::size_t>(c) * (n_ + 1) + r; }
    Granules n_;
    std::vector<double> energy_, time_;
};

}  // namespace detail
}  // namespace hetpu_legacy
// ---- prefix_bounds.cpp

namespace hetpu_legacy {
namespace detail {

PrefixBounds::PrefixBounds(const ProfileTable &tab, double max_energy, double max_time) : n_(tab.workload())
{
    const int p = tab.procs();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n_) + 1;
    energy_.assign((p + 1) * width, inf);
    time_.assign((p + 1) * width, inf);
    energy_[idx(0, 0)] = 0.0;
    time_[idx(0, 0)] = 0.0;
    for (int c = 0; c < p; ++c) {
        // Idle on processor c.
        std::copy(energy_.begin() + idx(c, 0), energy_.begin() + idx(c, 0) + width, energy_.begin() + idx(c + 1, 0));
        std::copy(time_.begin() + idx(c, 0), time_.begin() + idx(c, 0) + width, time_.begin() + idx(c + 1, 0));
        for (Granules x : tab.sizes(c)) {
            const double ex = tab.energy(c, x), tx = tab.time(c, x);
            if (ex > max_energy || tx > max_time)
                continue;
            const double *e_in = &energy_[idx(c, 0)], *t_in = &time_[idx(c, 0)];
            double *e_out = &energy_[idx(c + 1, 0)], *t_out = &time_[idx(c + 1, 0)];
            for (Granules r = x; r <= n_; ++r) {
                e_out[r] = std::min(e_out[r], e_in[r - x] + ex);
                t_out[r] = std::min(t_out[r], std::max(t_in[r - x], tx));
            }
        }
    }
}

}  // namespace detail
}  // namespace hetpu_legacy
// ---- cheapest_within.h
// The least-energy distribution under a makespan cap: the shared last step of HPOPTA
// (cap = optimal makespan) and of the minimum-energy distribution (cap = the least
// makespan any minimum-energy distribution has). Internal to the Pareto cores.

namespace hetpu_legacy {
namespace detail {

// Sizes of a distribution of the table's workload using only points with time <= time_cap
// that has the least dynamic energy, then the fewest active processors; empty if none
// exists. Exact for both keys because the cap makes time a constraint, not an objective:
// energy and active count are both sums, so the best prefix is best for every completion
// (keeping a (time, energy, count) lexicographic best per prefix would not be: a slower
// prefix with fewer active processors can win once a later processor sets the makespan).
// Energies are summed in processor order, as evaluate_distribution() does, so ties are
// decided on the numbers that are reported. O(p m n) time, O(p n) memory.
std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap);

}  // namespace detail
}  // namespace hetpu_legacy
// ---- cheapest_within.cpp

namespace hetpu_legacy {
namespace detail {

std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap)
{
    const int p = tab.procs();
    const Granules n = tab.workload();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n) + 1;
    std::vector<double> e(width, inf), e_next(width);
    std::vector<int> k(width, 0), k_next(width);
    std::vector<std::vector<Granules>> choice(p, std::vector<Granules>(width, -1));
    e[0] = 0.0;
    for (int i = 0; i < p; ++i) {
        e_next = e;  // idle
        k_next = k;
        for (std::size_t s = 0; s < width; ++s)
            if (e[s] < inf)
                choice[i][s] = 0;
        for (Granules x : tab.sizes(i)) {
            if (tab.time(i, x) > time_cap)
                continue;
            const double ex = tab.energy(i, x);
            for (Granules s = x; s <= n; ++s) {
                if (e[s - x] == inf)
                    continue;
                const double cand = e[s - x] + ex;
                const int kc = k[s - x] + 1;
                if (cand < e_next[s] || (cand == e_next[s] && kc < k_next[s])) {
                    e_next[s] = cand;
                    k_next[s] = kc;
                    choice[i][s] = x;
                }
            }
        }
        e.swap(e_next);
        k.swap(k_next);
    }
    if (e[n] == inf)
        return {};
    std::vector<Granules> sizes(p, 0);
    Granules rest = n;
    for (int i = p - 1; i >= 0; --i) {
        sizes[i] = choice[i][rest];
        rest -= sizes[i];
    }
    return sizes;
}

}  // namespace detail
}  // namespace hetpu_legacy
// ---- pareto_profiles.cpp (validation)
namespace hetpu_legacy {
namespace {

std::string proc_label(const std::vector<ProcessorProfile> &profiles, std::size_t i)
{
    std::ostringstream os;
    os << "processor " << i;
    if (!profiles[i].name.empty())
        os << " (" << profiles[i].name << ")";
    return os.str();
}

bool is_idle_point(const ProfilePoint &pt) { return pt.size == 0 && pt.time_s == 0.0 && pt.energy_j == 0.0; }

}  // namespace

void legacy_validate_profiles(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    if (profiles.empty())
        throw InvalidProfileError("pareto: need at least one processor profile");
    if (n < 0)
        throw InvalidProfileError("pareto: workload n=" + std::to_string(n) + " is negative");
    if (n > kMaxParetoWorkload)
        throw InvalidProfileError("pareto: workload n=" + std::to_string(n) + " granules exceeds the limit " +
                                  std::to_string(kMaxParetoWorkload) + "; use a coarser granule");
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        std::vector<Granules> sizes;
        sizes.reserve(profiles[i].points.size());
        for (const ProfilePoint &pt : profiles[i].points) {
            std::ostringstream where;
            where << "pareto: " << proc_label(profiles, i) << ", point size=" << pt.size << ": ";
            if (is_idle_point(pt))
                continue;  // redundant but harmless: idle is implicit
            if (pt.size <= 0)
                throw InvalidProfileError(where.str() +
                                          "size must be > 0 (idle is implicit: size 0, time 0, energy 0)");
            if (!std::isfinite(pt.time_s) || pt.time_s <= 0.0)
                throw InvalidProfileError(where.str() + "time must be finite and > 0");
            if (!std::isfinite(pt.energy_j) || pt.energy_j < 0.0)
                throw InvalidProfileError(where.str() + "dynamic energy must be finite and >= 0");
            sizes.push_back(pt.size);
        }
        std::sort(sizes.begin(), sizes.end());
        auto dup = std::adjacent_find(sizes.begin(), sizes.end());
        if (dup != sizes.end())
            throw InvalidProfileError("pareto: " + proc_label(profiles, i) + ": size " + std::to_string(*dup) +
                                      " appears more than once");
    }
}
}  // namespace hetpu_legacy

// ---- hpopta.cpp

namespace hetpu_legacy {

namespace {

using detail::ProfileTable;
using Bits = std::vector<std::uint64_t>;

// dst |= src << shift, on bitsets of equal length (bits past the end fall off).
void or_shifted(Bits &dst, const Bits &src, Granules shift)
{
    const std::size_t words = dst.size();
    const std::size_t ws = static_cast<std::size_t>(shift / 64);
    const unsigned bs = static_cast<unsigned>(shift % 64);
    if (ws >= words)
        return;
    for (std::size_t j = words; j-- > ws;) {
        std::uint64_t v = src[j - ws] << bs;
        if (bs != 0 && j - ws >= 1)
            v |= src[j - ws - 1] >> (64 - bs);
        dst[j] |= v;
    }
}

// Can n be formed using, on each processor, idle or a point whose time is <= limit?
bool reachable_within(const ProfileTable &tab, double limit)
{
    const Granules n = tab.workload();
    const std::size_t words = static_cast<std::size_t>(n / 64 + 1);
    Bits reach(words, 0), next(words, 0);
    reach[0] = 1;  // the empty prefix sums to 0
    for (int i = 0; i < tab.procs(); ++i) {
        next = reach;  // idle
        for (Granules x : tab.sizes(i))
            if (tab.time(i, x) <= limit)
                or_shifted(next, reach, x);
        reach.swap(next);
    }
    return (reach[static_cast<std::size_t>(n / 64)] >> (n % 64)) & 1u;
}

}  // namespace

Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    legacy_validate_profiles(profiles, n);
    const ProfileTable tab(profiles, n);
    const int p = tab.procs();

    std::vector<double> times{0.0};  // makespan 0 is the answer only for n == 0
    for (int i = 0; i < p; ++i)
        for (Granules x : tab.sizes(i))
            times.push_back(tab.time(i, x));
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());

    if (!reachable_within(tab, times.back()))
        throw UnreachableWorkloadError("pareto: workload n=" + std::to_string(n) +
                                       " granules cannot be formed as a sum of one profile size (or 0) per processor");
    // Smallest index whose time makes n reachable; reachability is monotone in the limit.
    std::size_t lo = 0, hi = times.size() - 1;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (reachable_within(tab, times[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    const double t_opt = times[lo];

    // Cheapest (energy, then active count) distribution within that makespan.
    const std::vector<Granules> sizes = detail::cheapest_within(tab, t_opt);
    return evaluate_distribution(profiles, sizes);
}

}  // namespace hetpu_legacy
// ---- min_energy.cpp

namespace hetpu_legacy {

Distribution min_energy_distribution(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    legacy_validate_profiles(profiles, n);
    const detail::ProfileTable tab(profiles, n);
    const int p = tab.procs();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n) + 1;

    // Pass 1: least energy and, among prefixes of least energy, least makespan. Keeping
    // one (energy, time) lexicographic best per prefix is exact: energy adds up and time
    // is a max, so a prefix better on both keys stays better under every completion.
    std::vector<double> e(width, inf), t(width, inf), e_next, t_next;
    e[0] = t[0] = 0.0;
    for (int i = 0; i < p; ++i) {
        e_next = e;  // idle
        t_next = t;
        for (Granules x : tab.sizes(i)) {
            const double ex = tab.energy(i, x), tx = tab.time(i, x);
            for (Granules s = x; s <= n; ++s) {
                if (e[s - x] == inf)
                    continue;
                const double ec = e[s - x] + ex, tc = std::max(t[s - x], tx);
                if (ec < e_next[s] || (ec == e_next[s] && tc < t_next[s])) {
                    e_next[s] = ec;
                    t_next[s] = tc;
                }
            }
        }
        e.swap(e_next);
        t.swap(t_next);
    }
    if (e[n] == inf)
        throw UnreachableWorkloadError("pareto: workload n=" + std::to_string(n) +
                                       " granules cannot be formed as a sum of one profile size (or 0) per processor");
    // Pass 2: the active-count tie rule, exact only with time as a cap (cheapest_within.h).
    return evaluate_distribution(profiles, detail::cheapest_within(tab, t[n]));
}

}  // namespace hetpu_legacy
// ---- hepopta.cpp
// HEPOPTA following the HEPOPTA paper, Algorithms 1, 2 and 8-13 (with the erratum in docs/design.md, "HEPOPTA Algorithm 2 leaf case (erratum)", for
// Algorithm 2's leaf case). The solution tree has one level per processor; the node
// (c, w) distributes w granules over processors c..p-1 and its Pareto set is memoised in
// PMem[c][w]. Differences from the printed pseudocode, all of which keep it exact:
//
//  * Memo entries point to their partial solution by index, not by energy "key": the sets
//    are immutable once finalised, and an index survives floating-point ties.
//  * The last level is memoised too (the paper rebuilds it in MergePartialParetoes); it is
//    a one-element set, so this only makes the code uniform.
//  * A time threshold mirrors the energy threshold: tau, the makespan of the minimum-
//    energy distribution. Anything slower than tau is dominated by that distribution, so
//    profile points slower than tau are removed like points dearer than eps (Figure 12).
//  * The thresholds are applied per node, not only per point: node (c, w) leaves n - w
//    granules to processors 0..c-1, which cost at least E(c, n-w) and take at least
//    T(c, n-w) (PrefixBounds). A partial solution of energy e is dropped when
//    e + E(c, n-w) > eps (every completion is dominated by HPOPTA's solution), and partial
//    times are clamped up to max(t_opt, T(c, n-w)): the prefix is at least that slow, so
//    the clamp never changes a complete distribution's makespan, while all partial
//    solutions faster than it collapse onto the cheapest of them. The bounds depend on
//    (c, w) only, so memoisation stays valid.
//  * The paper's tie rule (equal time and energy: fewer active processors) is made exact.
//    Pruning partial sets in (time, energy) alone can discard the sub-solution that would
//    have produced the fewest-active tie (A = (e, 5 s, 3 procs) vs B = (e, 4 s, 5 procs):
//    under a 6 s point both give the same time and energy). So a partial solution Q
//    removes P only if t_Q <= t_P and (e_Q < e_P, or e_Q == e_P and k_Q <= k_P). Extra
//    entries appear only on exact energy ties, at most p + 1 per energy value.

namespace hetpu_legacy {

namespace {

using detail::PrefixBounds;
using detail::ProfileTable;

// One memoised partial solution for node (c, w): the paper's <eng, time, part, P#, key>.
struct Entry {
    double e;            // dynamic energy on processors c..p-1
    double t;            // makespan on processors c..p-1, clamped (see file comment)
    Granules part;       // size given to processor c
    std::int32_t child;  // index of the partial solution in PMem[c+1][w-part]; -1 at the leaf
    std::int32_t k;      // active processors among c..p-1
};

class Kernel {
public:
    Kernel(const ProfileTable &tab, double t_opt, double eps, double tau, ParetoStats &stats)
        : tab_(tab), p_(tab.procs()), n_(tab.workload()), t_opt_(t_opt),
          // Sums of up to 2p non-negative terms carry a relative rounding error below
          // 2p * DBL_EPSILON; widening eps by more keeps HPOPTA's own solution (whose energy
          // is eps summed in canonical order) from being pruned when summed in another.
          eps_(eps * (1.0 + 8.0 * p_ * DBL_EPSILON)), tau_(tau), bounds_(tab, eps_, tau), stats_(stats),
          pmem_(static_cast<std::size_t>(p_) * (n_ + 1)), done_(static_cast<std::size_t>(p_) * (n_ + 1), 0)
    {
        // E_c sorted by energy (Algorithm 1 line 15), points above eps removed (Figure 12),
        // idle first. Size thresholds sigma (Algorithm 8) from the largest usable sizes.
        order_.resize(p_);
        sigma_.assign(p_ + 1, 0);
        for (int c = p_ - 1; c >= 0; --c) {
            order_[c].push_back(0);
            Granules largest = 0;
            for (Granules x : tab_.sizes(c))
                if (tab_.energy(c, x) <= eps_ && tab_.time(c, x) <= tau_) {
                    order_[c].push_back(x);
                    largest = std::max(largest, x);
                }
            std::stable_sort(order_[c].begin() + 1, order_[c].end(),
                             [&](Granules a, Granules b) { return tab_.energy(c, a) < tab_.energy(c, b); });
            sigma_[c] = sigma_[c + 1] + largest;
        }
    }

    // Pareto set of node (c, w), sorted by (e, t, k); empty when no solution within eps.
    const std::vector<Entry> &solve(int c, Granules w)
    {
        std::vector<Entry> &cell = pmem_[index(c, w)];
        if (done_[index(c, w)])
            return cell;
        done_[index(c, w)] = 1;  // MakeParetoFinal: an empty finalised cell is "_NS"
        const double prefix_e = bounds_.min_energy(c, n_ - w);
        const double floor_t = std::max(t_opt_, bounds_.min_time(c, n_ - w));
        if (c == p_ - 1) {
            // Leaf (erratum): a solution iff the last processor can take all of w within
            // the thresholds.
            if (tab_.has(c, w) && tab_.energy(c, w) + prefix_e <= eps_ && tab_.time(c, w) <= tau_)
                cell.push_back(Entry{tab_.energy(c, w), std::max(floor_t, tab_.time(c, w)), w, -1, w > 0 ? 1 : 0});
            return cell;
        }
        ++stats_.cells_built;
        for (Granules x : order_[c]) {
            if (x > w)
                continue;
            const Granules rest = w - x;
            if (rest > sigma_[c + 1]) {  // Cut
                ++stats_.cuts;
                continue;
            }
            if (done_[index(c + 1, rest)])
                ++stats_.memo_hits;
            const std::vector<Entry> &sub = solve(c + 1, rest);
            const double ex = tab_.energy(c, x);
            const double tx = std::max(floor_t, tab_.time(c, x));
            const std::int32_t kx = x > 0 ? 1 : 0;
            // Once a sub-solution is no slower than processor c, c alone sets the time of
            // every later one (sub-times decrease with energy), so later entries only cost
            // more (Algorithm 12 line 58). Entries of exactly the same energy are still
            // merged, for the tie rule.
            bool capped = false;
            double capped_e = 0;
            for (std::size_t j = 0; j < sub.size(); ++j) {
                const Entry &s = sub[j];
                if (capped && s.e != capped_e)
                    break;
                const double e = ex + s.e;
                if (e + prefix_e > eps_)
                    break;  // sub is sorted by energy: the rest is dearer still
                ++stats_.candidates;
                const double rejected_by_t =
                    insert(cell, Entry{e, std::max(tx, s.t), x, static_cast<std::int32_t>(j), kx + s.k});
                // A strictly cheaper entry Q rejected it. Every later candidate is dearer
                // still, so Q rejects it too unless it is faster than Q: skip those at the
                // cost of one comparison each, and stop if even processor c alone is
                // no faster than Q.
                if (rejected_by_t <= tx)
                    break;
                while (j + 1 < sub.size() && sub[j + 1].t >= rejected_by_t)
                    ++j;

                if (!capped && s.t <= tx) {
                    capped = true;
                    capped_e = s.e;
                }
            }
        }
        cell.shrink_to_fit();
        return cell;
    }

    // Follows the child indices from a root entry down to a complete distribution
    // (Algorithm 13, BuildParetoSols).
    std::vector<Granules> distribution(const Entry &root) const
    {
        std::vector<Granules> sizes(p_, 0);
        const Entry *e = &root;
        Granules w = n_;
        for (int c = 0;; ++c) {
            sizes[c] = e->part;
            w -= e->part;
            if (c == p_ - 1)
                break;
            e = &pmem_[index(c + 1, w)][static_cast<std::size_t>(e->child)];
        }
        return sizes;
    }

private:
    std::size_t index(int c, Granules w) const
    {
        return static_cast<std::size_t>(c) * static_cast<std::size_t>(n_ + 1) + static_cast<std::size_t>(w);
    }

    // Does partial solution a make b useless? The exact tie rule of the file comment.
    static bool removes(const Entry &a, const Entry &b)
    {
        return a.t <= b.t && (a.e < b.e || (a.e == b.e && a.k <= b.k));
    }

    // MergePartialParetoes' online insertion (Algorithm 12: lower_bound on energy, then
    // drop what the newcomer dominates), with the exact tie rule. Invariant of `set`: no
    // entry removes another; sorted by energy, equal energies by increasing time (their
    // active counts then strictly decrease); the first entries of successive energy groups
    // have strictly decreasing times. So among cheaper entries the fastest is the first of
    // the group just before the newcomer's energy, and most candidates are rejected after a
    // binary search and one comparison. Returns the time of the strictly cheaper entry that
    // rejected the candidate, +infinity if the candidate was not rejected that way.
    static double insert(std::vector<Entry> &set, const Entry &cand)
    {
        const double none = std::numeric_limits<double>::infinity();
        auto pos = std::lower_bound(set.begin(), set.end(), cand.e, [](const Entry &a, double e) { return a.e < e; });
        if (pos != set.begin()) {
            auto q = pos - 1;
            while (q != set.begin() && (q - 1)->e == q->e)
                --q;
            if (q->t <= cand.t)
                return q->t;
        }
        auto ins = pos;
        for (auto g = pos; g != set.end() && g->e == cand.e; ++g) {
            if (removes(*g, cand))
                return none;
            if (g->t <= cand.t)
                ins = g + 1;
        }
        const std::size_t from = static_cast<std::size_t>(pos - set.begin());
        const std::size_t at = static_cast<std::size_t>(ins - set.begin());
        set.insert(ins, cand);
        std::size_t out = from;
        for (std::size_t r = from; r < set.size(); ++r)
            if (r == at || !removes(cand, set[r]))
                set[out++] = set[r];
        set.resize(out);
        return none;
    }

    const ProfileTable &tab_;
    const int p_;
    const Granules n_;
    const double t_opt_;
    const double eps_;  // energy threshold, widened for rounding
    const double tau_;  // time threshold
    const PrefixBounds bounds_;
    ParetoStats &stats_;
    std::vector<std::vector<Granules>> order_;
    std::vector<Granules> sigma_;
    std::vector<std::vector<Entry>> pmem_;  // PMem[c][w] at index(c, w)
    std::vector<char> done_;                // finalised cells
};

}  // namespace

std::vector<Distribution> hepopta(const std::vector<ProcessorProfile> &profiles, Granules n, ParetoStats *stats)
{
    // hpopta() validates and throws UnreachableWorkloadError, so past it a front exists.
    const Distribution fastest = hpopta(profiles, n);
    ParetoStats local;
    ParetoStats &st = stats ? *stats : local;
    st = ParetoStats{};
    st.t_opt_s = fastest.time_s;
    st.eps_j = fastest.dynamic_energy_j;

    const Distribution cheapest = min_energy_distribution(profiles, n);
    const ProfileTable tab(profiles, n);
    Kernel kernel(tab, fastest.time_s, fastest.dynamic_energy_j, cheapest.time_s, st);
    std::vector<Distribution> sols;
    for (const Entry &root : kernel.solve(0, n))
        sols.push_back(evaluate_distribution(profiles, kernel.distribution(root)));
    // Re-filter on the canonically evaluated figures: the kernel summed energies in another
    // order, and the report must be consistent with the numbers it prints.
    sols.push_back(fastest);   // both ends of the front are known; adding them is a cheap
    sols.push_back(cheapest);  // safety net against rounding at the thresholds
    return pareto_front(std::move(sols), EnergyObjective::Dynamic);
}

std::vector<Distribution> htpopta(const std::vector<ProcessorProfile> &profiles, Granules n, double base_power_w,
                                  ParetoStats *stats)
{
    validate_base_power(base_power_w);
    std::vector<Distribution> front = hepopta(profiles, n, stats);
    for (Distribution &d : front)
        d.total_energy_j = d.dynamic_energy_j + base_power_w * d.time_s;
    return pareto_front(std::move(front), EnergyObjective::Total);
}

}  // namespace hetpu_legacy
