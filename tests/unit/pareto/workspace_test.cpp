// SPDX-License-Identifier: LGPL-2.1-or-later
// A ParetoWorkspace changes where the tables live, never what is computed: the same
// figures, bit for bit, whether the workspace is fresh, reused after larger or smaller
// calls of other shapes, or absent.
#include "sched_policies/pareto/core/hepopta.h"
#include "sched_policies/pareto/core/hpopta.h"
#include "sched_policies/pareto/core/pareto_workspace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace {

using namespace hetpu;

std::vector<ProcessorProfile> profiles(std::mt19937 &rng, int p, int m)
{
    std::uniform_real_distribution<double> u(0.5, 1.5);
    std::vector<ProcessorProfile> profs(p);
    for (int i = 0; i < p; ++i) {
        profs[i].name = "P" + std::to_string(i);
        for (int j = 1; j <= m; ++j)
            if (u(rng) < 1.2)  // some sizes missing
                profs[i].points.push_back(ProfilePoint{j, j * 1e-3 * (i + 1) * u(rng), j * 0.1 * u(rng)});
    }
    return profs;
}

void expect_same(const std::vector<Distribution> &a, const std::vector<Distribution> &b)
{
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].sizes, b[i].sizes);
        EXPECT_EQ(a[i].time_s, b[i].time_s);
        EXPECT_EQ(a[i].dynamic_energy_j, b[i].dynamic_energy_j);
        EXPECT_EQ(a[i].total_energy_j, b[i].total_energy_j);
    }
}

TEST(ParetoWorkspace, ReusedWorkspaceGivesIdenticalFronts)
{
    std::mt19937 rng(51);
    ParetoWorkspace ws;
    // Large, small, large again, different processor counts: stale contents from a
    // previous call must never leak into the next.
    for (auto [p, m] : std::vector<std::pair<int, int>>{{6, 120}, {2, 10}, {8, 60}, {3, 200}, {6, 120}, {1, 30}}) {
        const auto profs = profiles(rng, p, m);
        Granules cap = 0;
        for (const auto &prof : profs)
            cap += prof.points.empty() ? 0 : prof.points.back().size;
        for (Granules n : {cap / 5, cap / 2, cap - 1}) {
            if (n <= 0)
                continue;
            Distribution fast;
            try {
                fast = hpopta(profs, n);
            } catch (const UnreachableWorkloadError &) {
                EXPECT_THROW(hpopta(profs, n, ws), UnreachableWorkloadError);
                EXPECT_THROW(hepopta(profs, n, ws), UnreachableWorkloadError);
                continue;
            }
            const Distribution fast_ws = hpopta(profs, n, ws);
            EXPECT_EQ(fast.sizes, fast_ws.sizes);
            EXPECT_EQ(fast.time_s, fast_ws.time_s);
            EXPECT_EQ(fast.dynamic_energy_j, fast_ws.dynamic_energy_j);
            ParetoStats st_plain, st_ws;
            expect_same(hepopta(profs, n, &st_plain), hepopta(profs, n, ws, &st_ws));
            EXPECT_EQ(st_plain.cells_built, st_ws.cells_built);
            EXPECT_EQ(st_plain.candidates, st_ws.candidates);
            EXPECT_EQ(st_plain.table_bytes, st_ws.table_bytes);
            expect_same(htpopta(profs, n, 40.0), htpopta(profs, n, 40.0, ws));
        }
    }
    EXPECT_GT(ws.capacity_bytes(), 0u);
    ws.release();
    EXPECT_EQ(ws.capacity_bytes(), 0u);
}

// The cores read ascending, idle-free profiles in place and copy the others: points in any
// order, with the idle point listed, on some processors only, give the same fronts.
TEST(ParetoWorkspace, UnorderedProfilesGiveTheSameFrontsAsOrderedOnes)
{
    std::mt19937 rng(77);
    const auto ordered = profiles(rng, 5, 80);
    auto mixed = ordered;
    for (std::size_t i = 0; i < mixed.size(); i += 2) {
        std::shuffle(mixed[i].points.begin(), mixed[i].points.end(), rng);
        mixed[i].points.push_back(ProfilePoint{0, 0.0, 0.0});
    }
    ParetoWorkspace ws;
    Granules cap = 0;
    for (const auto &prof : ordered)
        cap += prof.points.back().size;
    for (Granules n : {cap / 7, cap / 3, cap / 2}) {
        const Distribution a = hpopta(ordered, n, ws), b = hpopta(mixed, n, ws);
        EXPECT_EQ(a.sizes, b.sizes);
        EXPECT_EQ(a.time_s, b.time_s);
        EXPECT_EQ(a.dynamic_energy_j, b.dynamic_energy_j);
        expect_same(hepopta(ordered, n, ws), hepopta(mixed, n, ws));
    }
}

TEST(ParetoWorkspace, MovedFromWorkspaceStillWorks)
{
    std::mt19937 rng(7);
    const auto profs = profiles(rng, 4, 50);
    ParetoWorkspace a;
    const auto front = hepopta(profs, 60, a);
    ParetoWorkspace b = std::move(a);
    expect_same(front, hepopta(profs, 60, b));
    expect_same(front, hepopta(profs, 60, a));  // NOLINT(bugprone-use-after-move): documented to start afresh
}

}  // namespace
