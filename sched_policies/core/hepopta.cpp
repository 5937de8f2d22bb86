// HEPOPTA following seed 001, Algorithms 1, 2 and 8-13 (with the DESIGN.md erratum for
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
#include "sched_policies/core/hepopta.h"

#include "sched_policies/core/hpopta.h"
#include "sched_policies/core/min_energy.h"
#include "sched_policies/core/pareto_front.h"
#include "sched_policies/core/prefix_bounds.h"
#include "sched_policies/core/profile_table.h"

#include <algorithm>
#include <cfloat>
#include <limits>

namespace hetpu {

namespace {

using detail::PrefixBounds;
using detail::ProfileTable;

// One memoised partial solution for node (c, w): the paper's <eng, time, part, P#, key>.
struct Entry {
    double e;        // dynamic energy on processors c..p-1
    double t;        // makespan on processors c..p-1, clamped (see file comment)
    Granules part;   // size given to processor c
    std::int32_t child;  // index of the partial solution in PMem[c+1][w-part]; -1 at the leaf
    std::int32_t k;  // active processors among c..p-1
};

class Kernel {
public:
    Kernel(const ProfileTable &tab, double t_opt, double eps, double tau, ParetoStats &stats)
        : tab_(tab), p_(tab.procs()), n_(tab.workload()), t_opt_(t_opt),
          // Sums of up to 2p non-negative terms carry a relative rounding error below
          // 2p * DBL_EPSILON; widening eps by more keeps HPOPTA's own solution (whose energy
          // is eps summed in canonical order) from being pruned when summed in another.
          eps_(eps * (1.0 + 8.0 * p_ * DBL_EPSILON)), tau_(tau), bounds_(tab, eps_, tau),
          stats_(stats), pmem_(static_cast<std::size_t>(p_) * (n_ + 1)),
          done_(static_cast<std::size_t>(p_) * (n_ + 1), 0)
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
            std::stable_sort(order_[c].begin() + 1, order_[c].end(), [&](Granules a, Granules b) {
                return tab_.energy(c, a) < tab_.energy(c, b);
            });
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
                cell.push_back(Entry{tab_.energy(c, w), std::max(floor_t, tab_.time(c, w)), w, -1,
                                     w > 0 ? 1 : 0});
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
        auto pos = std::lower_bound(set.begin(), set.end(), cand.e,
                                    [](const Entry &a, double e) { return a.e < e; });
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

std::vector<Distribution> hepopta(const std::vector<ProcessorProfile> &profiles, Granules n,
                                  ParetoStats *stats)
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
    sols.push_back(fastest);  // both ends of the front are known; adding them is a cheap
    sols.push_back(cheapest); // safety net against rounding at the thresholds
    return pareto_front(std::move(sols), EnergyObjective::Dynamic);
}

std::vector<Distribution> htpopta(const std::vector<ProcessorProfile> &profiles, Granules n,
                                  double base_power_w, ParetoStats *stats)
{
    validate_base_power(base_power_w);
    std::vector<Distribution> front = hepopta(profiles, n, stats);
    for (Distribution &d : front)
        d.total_energy_j = d.dynamic_energy_j + base_power_w * d.time_s;
    return pareto_front(std::move(front), EnergyObjective::Total);
}

}  // namespace hetpu
