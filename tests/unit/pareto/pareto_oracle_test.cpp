// SPDX-License-Identifier: LGPL-2.1-or-later
// HPOPTA / min-energy / HEPOPTA / HTPOPTA against two oracles written independently of the cores:
//  * an exhaustive enumerator of every distribution (small instances), and
//  * a forward dynamic programme over (processor prefix, partial sum) that keeps the full
//    3-D Pareto set of (time, energy, active processors) with a naive quadratic filter, no
//    thresholds, no clamping, no memoised tree (medium instances).
// Profile values are small multiples of 1/4 so that every sum is exact in double and the
// fronts can be compared bit for bit, ties included; one suite uses arbitrary doubles and
// compares with a relative tolerance.
#include "sched_policies/pareto/core/hepopta.h"
#include "sched_policies/pareto/core/hpopta.h"
#include "sched_policies/pareto/core/min_energy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <vector>

using hetpu::Distribution;
using hetpu::Granules;
using hetpu::ProcessorProfile;
using hetpu::ProfilePoint;

namespace {

// (time, energy, fewest active processors reaching exactly that time and energy)
struct FrontPoint {
    double t, e;
    int k;
};

struct Outcome {
    bool reachable = false;
    std::vector<FrontPoint> dyn_front;    // sorted by increasing energy
    std::vector<FrontPoint> total_front;  // energy here is dynamic + ps * time
    double t_opt = 0, e_at_t_opt = 0;
    int k_at_t_opt = 0;
};

// Oracle's own point lookup (deliberately not the cores' ProfileTable).
bool lookup(const ProcessorProfile &prof, Granules x, double &t, double &e)
{
    if (x == 0) {
        t = e = 0;
        return true;
    }
    for (const ProfilePoint &pt : prof.points)
        if (pt.size == x) {
            t = pt.time_s;
            e = pt.energy_j;
            return true;
        }
    return false;
}

// Reduces (t, energy, k) triples to a 2-D front with the fewest-active tie rule.
std::vector<FrontPoint> front_of(std::vector<FrontPoint> all)
{
    std::sort(all.begin(), all.end(), [](const FrontPoint &a, const FrontPoint &b) {
        return std::tie(a.e, a.t, a.k) < std::tie(b.e, b.t, b.k);
    });
    std::vector<FrontPoint> front;
    for (const FrontPoint &q : all) {
        bool dominated = false;
        for (const FrontPoint &r : all)
            if ((r.t <= q.t && r.e <= q.e) && (r.t < q.t || r.e < q.e))
                dominated = true;
        if (dominated)
            continue;
        if (!front.empty() && front.back().t == q.t && front.back().e == q.e)
            continue;  // same point: sorted by k, the first one has the fewest active
        front.push_back(q);
    }
    return front;
}

Outcome finish(const std::vector<FrontPoint> &all, double ps)
{
    Outcome o;
    o.reachable = !all.empty();
    if (!o.reachable)
        return o;
    o.dyn_front = front_of(all);
    std::vector<FrontPoint> tot;
    for (const FrontPoint &q : all)
        tot.push_back(FrontPoint{q.t, q.e + ps * q.t, q.k});
    o.total_front = front_of(tot);
    // The time-optimal reference: min time, then min energy, then min k.
    FrontPoint best = all[0];
    for (const FrontPoint &q : all)
        if (std::tie(q.t, q.e, q.k) < std::tie(best.t, best.e, best.k))
            best = q;
    o.t_opt = best.t;
    o.e_at_t_opt = best.e;
    o.k_at_t_opt = best.k;
    return o;
}

void enumerate(const std::vector<ProcessorProfile> &profs, std::size_t i, Granules left, double t, double e, int k,
               std::vector<FrontPoint> &out)
{
    if (i == profs.size()) {
        if (left == 0)
            out.push_back(FrontPoint{t, e, k});
        return;
    }
    std::vector<Granules> choices{0};
    for (const ProfilePoint &pt : profs[i].points)
        choices.push_back(pt.size);
    for (Granules x : choices) {
        double tx, ex;
        if (x > left || !lookup(profs[i], x, tx, ex))
            continue;
        enumerate(profs, i + 1, left - x, std::max(t, tx), e + ex, k + (x > 0), out);
    }
}

Outcome exhaustive_oracle(const std::vector<ProcessorProfile> &profs, Granules n, double ps)
{
    std::vector<FrontPoint> all;
    enumerate(profs, 0, n, 0.0, 0.0, 0, all);
    return finish(all, ps);
}

// 3-D weak dominance: a triple kept only if no other is <= in time, energy and active count.
void keep_nondominated(std::vector<FrontPoint> &set)
{
    std::vector<FrontPoint> out;
    for (std::size_t a = 0; a < set.size(); ++a) {
        bool drop = false;
        for (std::size_t b = 0; b < set.size() && !drop; ++b) {
            if (a == b)
                continue;
            const FrontPoint &p = set[a], &q = set[b];
            const bool le = q.t <= p.t && q.e <= p.e && q.k <= p.k;
            const bool same = q.t == p.t && q.e == p.e && q.k == p.k;
            drop = le && (!same || b < a);  // identical triples: keep the first copy
        }
        if (!drop)
            out.push_back(set[a]);
    }
    set.swap(out);
}

Outcome dp_oracle(const std::vector<ProcessorProfile> &profs, Granules n, double ps)
{
    std::vector<std::vector<FrontPoint>> cur(n + 1), next;
    cur[0].push_back(FrontPoint{0, 0, 0});
    for (const ProcessorProfile &prof : profs) {
        next.assign(n + 1, {});
        std::vector<Granules> choices{0};
        for (const ProfilePoint &pt : prof.points)
            choices.push_back(pt.size);
        for (Granules s = 0; s <= n; ++s)
            for (const FrontPoint &q : cur[s])
                for (Granules x : choices) {
                    double tx, ex;
                    if (s + x > n || !lookup(prof, x, tx, ex))
                        continue;
                    next[s + x].push_back(FrontPoint{std::max(q.t, tx), q.e + ex, q.k + (x > 0)});
                }
        for (auto &set : next)
            keep_nondominated(set);
        cur.swap(next);
    }
    return finish(cur[n], ps);
}

// Random profile: m distinct sizes out of 1..max_size, non-monotone times in (0, 5] and
// energies in [0, 5], quarter-unit values (exact sums, frequent ties, zero energies).
std::vector<ProcessorProfile> random_profiles(std::mt19937 &rng, int p, int m, Granules max_size, bool coarse_values)
{
    std::vector<ProcessorProfile> profs(p);
    std::uniform_int_distribution<int> quarter_t(1, coarse_values ? 8 : 20);
    std::uniform_int_distribution<int> quarter_e(0, coarse_values ? 8 : 20);
    for (int i = 0; i < p; ++i) {
        std::vector<Granules> sizes;
        for (Granules s = 1; s <= max_size; ++s)
            sizes.push_back(s);
        std::shuffle(sizes.begin(), sizes.end(), rng);
        const int mi = std::uniform_int_distribution<int>(1, std::min<int>(m, static_cast<int>(max_size)))(rng);
        for (int j = 0; j < mi; ++j)
            profs[i].points.push_back(ProfilePoint{sizes[j], 0.25 * quarter_t(rng), 0.25 * quarter_e(rng)});
    }
    return profs;
}

Granules random_workload(std::mt19937 &rng, const std::vector<ProcessorProfile> &profs)
{
    Granules cap = 0;
    for (const ProcessorProfile &prof : profs) {
        Granules mx = 0;
        for (const ProfilePoint &pt : prof.points)
            mx = std::max(mx, pt.size);
        cap += mx;
    }
    return std::uniform_int_distribution<Granules>(0, cap + 1)(rng);
}

// Every reported distribution must be feasible and reproduce its own figures exactly.
void check_self_consistent(const std::vector<ProcessorProfile> &profs, Granules n, const Distribution &d, double ps)
{
    ASSERT_EQ(d.sizes.size(), profs.size());
    Granules sum = 0;
    double t = 0, e = 0;
    int k = 0;
    for (std::size_t i = 0; i < profs.size(); ++i) {
        double tx, ex;
        ASSERT_TRUE(lookup(profs[i], d.sizes[i], tx, ex)) << "size " << d.sizes[i] << " not in profile " << i;
        sum += d.sizes[i];
        t = std::max(t, tx);
        e += ex;
        k += d.sizes[i] > 0;
    }
    EXPECT_EQ(sum, n);
    EXPECT_EQ(d.time_s, t);
    EXPECT_EQ(d.dynamic_energy_j, e);
    EXPECT_EQ(d.total_energy_j, e + ps * t);
    EXPECT_EQ(d.active, k);
}

void expect_same_front(const std::vector<FrontPoint> &want, const std::vector<Distribution> &got, bool total,
                       const std::string &what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].time_s, want[i].t) << what << " point " << i;
        EXPECT_EQ(total ? got[i].total_energy_j : got[i].dynamic_energy_j, want[i].e) << what << " point " << i;
        EXPECT_EQ(got[i].active, want[i].k) << what << " point " << i << " (fewest-active tie rule)";
    }
}

// Runs all three cores on one instance and compares them with the oracle's outcome.
void compare(const std::vector<ProcessorProfile> &profs, Granules n, double ps, const Outcome &want,
             const std::string &what)
{
    if (!want.reachable) {
        EXPECT_THROW(hetpu::hpopta(profs, n), hetpu::UnreachableWorkloadError) << what;
        EXPECT_THROW(hetpu::hepopta(profs, n), hetpu::UnreachableWorkloadError) << what;
        EXPECT_THROW(hetpu::htpopta(profs, n, ps), hetpu::UnreachableWorkloadError) << what;
        EXPECT_THROW(hetpu::min_energy_distribution(profs, n), hetpu::UnreachableWorkloadError) << what;
        return;
    }
    const Distribution fast = hetpu::hpopta(profs, n);
    check_self_consistent(profs, n, fast, 0.0);
    EXPECT_EQ(fast.time_s, want.t_opt) << what;
    EXPECT_EQ(fast.dynamic_energy_j, want.e_at_t_opt) << what;
    EXPECT_EQ(fast.active, want.k_at_t_opt) << what;

    // The cheapest distribution is the first front point (least time, then fewest active).
    const Distribution cheap = hetpu::min_energy_distribution(profs, n);
    check_self_consistent(profs, n, cheap, 0.0);
    EXPECT_EQ(cheap.dynamic_energy_j, want.dyn_front.front().e) << what;
    EXPECT_EQ(cheap.time_s, want.dyn_front.front().t) << what;
    EXPECT_EQ(cheap.active, want.dyn_front.front().k) << what;

    const std::vector<Distribution> dyn = hetpu::hepopta(profs, n);
    for (const Distribution &d : dyn)
        check_self_consistent(profs, n, d, 0.0);
    expect_same_front(want.dyn_front, dyn, false, what + " hepopta");

    const std::vector<Distribution> tot = hetpu::htpopta(profs, n, ps);
    for (const Distribution &d : tot)
        check_self_consistent(profs, n, d, ps);
    expect_same_front(want.total_front, tot, true, what + " htpopta");
}

std::string describe(int seed, const std::vector<ProcessorProfile> &profs, Granules n)
{
    std::string s = "seed " + std::to_string(seed) + " n=" + std::to_string(n) + " p=" + std::to_string(profs.size());
    for (std::size_t i = 0; i < profs.size(); ++i) {
        s += "\n  P" + std::to_string(i) + ":";
        for (const ProfilePoint &pt : profs[i].points)
            s += " (" + std::to_string(pt.size) + "," + std::to_string(pt.time_s) + "," + std::to_string(pt.energy_j) +
                 ")";
    }
    return s;
}

}  // namespace

TEST(ParetoOracle, ExhaustiveSmallInstances)
{
    int reachable = 0;
    for (int seed = 0; seed < 3000; ++seed) {
        std::mt19937 rng(seed);
        const int p = std::uniform_int_distribution<int>(1, 4)(rng);
        const auto profs = random_profiles(rng, p, 4, 6, seed % 2 == 0);
        const Granules n = random_workload(rng, profs);
        const double ps = 0.25 * std::uniform_int_distribution<int>(0, 12)(rng);
        const Outcome want = exhaustive_oracle(profs, n, ps);
        reachable += want.reachable;
        compare(profs, n, ps, want, describe(seed, profs, n));
        if (HasFailure())
            return;  // one readable failure beats thousands
    }
    EXPECT_GT(reachable, 2000);  // the generator must mostly produce solvable instances
}

TEST(ParetoOracle, DynamicProgrammeMediumInstances)
{
    int reachable = 0;
    for (int seed = 0; seed < 1500; ++seed) {
        std::mt19937 rng(100000 + seed);
        const int p = std::uniform_int_distribution<int>(1, 6)(rng);
        const auto profs = random_profiles(rng, p, 14, 24, seed % 3 == 0);
        const Granules n = random_workload(rng, profs);
        const double ps = 0.25 * std::uniform_int_distribution<int>(0, 12)(rng);
        const Outcome want = dp_oracle(profs, n, ps);
        reachable += want.reachable;
        compare(profs, n, ps, want, describe(100000 + seed, profs, n));
        if (HasFailure())
            return;
    }
    EXPECT_GT(reachable, 1000);
}

// The two oracles are independent of each other too; make sure they agree where both run.
TEST(ParetoOracle, OraclesAgree)
{
    for (int seed = 0; seed < 300; ++seed) {
        std::mt19937 rng(500000 + seed);
        const int p = std::uniform_int_distribution<int>(1, 4)(rng);
        const auto profs = random_profiles(rng, p, 5, 7, seed % 2 == 0);
        const Granules n = random_workload(rng, profs);
        const Outcome a = exhaustive_oracle(profs, n, 1.5), b = dp_oracle(profs, n, 1.5);
        ASSERT_EQ(a.reachable, b.reachable);
        ASSERT_EQ(a.dyn_front.size(), b.dyn_front.size()) << describe(seed, profs, n);
        for (std::size_t i = 0; i < a.dyn_front.size(); ++i)
            EXPECT_TRUE(a.dyn_front[i].t == b.dyn_front[i].t && a.dyn_front[i].e == b.dyn_front[i].e &&
                        a.dyn_front[i].k == b.dyn_front[i].k);
    }
}

// Arbitrary doubles: sums are no longer exact, so compare within a relative tolerance.
TEST(ParetoOracle, ArbitraryRealValuesWithinTolerance)
{
    for (int seed = 0; seed < 400; ++seed) {
        std::mt19937 rng(900000 + seed);
        std::uniform_real_distribution<double> u(0.01, 3.0);
        const int p = std::uniform_int_distribution<int>(1, 5)(rng);
        auto profs = random_profiles(rng, p, 10, 16, false);
        for (auto &prof : profs)
            for (auto &pt : prof.points) {
                pt.time_s = u(rng);
                pt.energy_j = u(rng);
            }
        const Granules n = random_workload(rng, profs);
        const Outcome want = dp_oracle(profs, n, 0.7);
        if (!want.reachable)
            continue;
        const auto dyn = hetpu::hepopta(profs, n);
        const auto tot = hetpu::htpopta(profs, n, 0.7);
        ASSERT_EQ(dyn.size(), want.dyn_front.size()) << describe(seed, profs, n);
        for (std::size_t i = 0; i < dyn.size(); ++i) {
            EXPECT_NEAR(dyn[i].time_s, want.dyn_front[i].t, 1e-12);
            EXPECT_NEAR(dyn[i].dynamic_energy_j, want.dyn_front[i].e, 1e-9 * want.dyn_front[i].e);
        }
        ASSERT_EQ(tot.size(), want.total_front.size()) << describe(seed, profs, n);
        for (std::size_t i = 0; i < tot.size(); ++i)
            EXPECT_NEAR(tot[i].total_energy_j, want.total_front[i].e, 1e-9 * want.total_front[i].e);
    }
}
