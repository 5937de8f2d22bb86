// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "sched_policies/core/tradeoff.h"

using namespace hetpu;

TEST(Tradeoff, ParsesTheThreeForms)
{
    Tradeoff t;
    EXPECT_EQ(parse_tradeoff("time", t), "");
    EXPECT_EQ(t.kind, Tradeoff::Time);
    EXPECT_EQ(parse_tradeoff("energy", t), "");
    EXPECT_EQ(t.kind, Tradeoff::Energy);
    EXPECT_EQ(parse_tradeoff("slowdown<=5%", t), "");
    EXPECT_EQ(t.kind, Tradeoff::Slowdown);
    EXPECT_DOUBLE_EQ(t.slowdown, 0.05);
    EXPECT_EQ(tradeoff_name(t), "slowdown<=5%");
    EXPECT_EQ(parse_tradeoff("slowdown<=12.5%", t), "");
    EXPECT_DOUBLE_EQ(t.slowdown, 0.125);
    for (const char *bad : {"", "fast", "slowdown<=%", "slowdown<=5", "slowdown<=-1%", "slowdown<=x%", "Time"})
        EXPECT_NE(parse_tradeoff(bad, t).find("use time, energy or slowdown<=X%"), std::string::npos) << bad;
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
    parse_tradeoff("time", t);
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 3u);
    parse_tradeoff("energy", t);
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 0u);
    parse_tradeoff("slowdown<=5%", t);
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 2u);
    parse_tradeoff("slowdown<=20%", t);
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 1u);
    parse_tradeoff("slowdown<=0%", t);
    EXPECT_EQ(pick_tradeoff(front, EnergyObjective::Dynamic, t), 3u);
}
