// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "sched_policies/pareto/core/tradeoff.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu;

TEST(Tradeoff, ParsesTheThreeForms)
{
    Tradeoff t;
    t = parse_tradeoff("time");
    EXPECT_EQ(t.kind, Tradeoff::Time);
    t = parse_tradeoff("energy");
    EXPECT_EQ(t.kind, Tradeoff::Energy);
    t = parse_tradeoff("slowdown<=5%");
    EXPECT_EQ(t.kind, Tradeoff::Slowdown);
    EXPECT_DOUBLE_EQ(t.slowdown, 0.05);
    EXPECT_EQ(tradeoff_name(t), "slowdown<=5%");
    t = parse_tradeoff("slowdown<=12.5%");
    EXPECT_DOUBLE_EQ(t.slowdown, 0.125);
    for (const char *bad : {"", "fast", "slowdown<=%", "slowdown<=5", "slowdown<=-1%", "slowdown<=x%", "Time"})
        EXPECT_THROW_MSG(parse_tradeoff(bad), std::invalid_argument,
                         "unknown trade-off '" + std::string(bad) +
                             "': use time, energy or slowdown<=X% (e.g. slowdown<=5%)");
}

TEST(Tradeoff, PicksTheRequestedPoint)
{
    auto pt = [](double t, double e) {
        Distribution d;
        d.time_s = t;
        d.dynamic_energy_j = d.total_energy_j = e;
        return d;
    };
    const std::vector<Distribution> front = {pt(3.0, 10), pt(1.2, 20), pt(1.04, 30), pt(1.0, 40)};
    Tradeoff t;
    t = parse_tradeoff("time");
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 3u);
    t = parse_tradeoff("energy");
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 0u);
    t = parse_tradeoff("slowdown<=5%");
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 2u);
    t = parse_tradeoff("slowdown<=20%");
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 1u);
    t = parse_tradeoff("slowdown<=0%");
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 3u);
}
