// SPDX-License-Identifier: LGPL-2.1-or-later
// The HEPOPTA paper's metrics on a hand-made front whose answers are worked out below.
#include <gtest/gtest.h>

#include "sched_policies/pareto/core/front_metrics.h"

using namespace hetpu;

namespace {

Distribution point(double t, double e, double ps = 0)
{
    Distribution d;
    d.time_s = t;
    d.dynamic_energy_j = e;
    d.total_energy_j = e + ps * t;
    return d;
}

}  // namespace

TEST(FrontMetrics, PaperFormulasOnAHandFront)
{
    // Increasing energy: (2.0 s, 100 J) ... (1.0 s, 300 J).
    std::vector<Distribution> front = {point(2.0, 100), point(1.6, 104), point(1.3, 150), point(1.04, 200),
                                       point(1.0, 300)};
    Distribution lb = point(1.5, 250);
    FrontMetrics m = front_metrics(front, lb, EnergyObjective::Dynamic);
    EXPECT_EQ(m.front_size, 5u);
    EXPECT_DOUBLE_EQ(m.t_opt_s, 1.0);
    EXPECT_DOUBLE_EQ(m.e_at_t_opt_j, 300);
    EXPECT_DOUBLE_EQ(m.e_opt_j, 100);
    EXPECT_DOUBLE_EQ(m.t_at_e_opt_s, 2.0);
    EXPECT_DOUBLE_EQ(m.lb_time_improvement_pct, 50.0);        // (1.5 - 1) / 1
    EXPECT_DOUBLE_EQ(m.lb_energy_saving_pct, 150.0);          // (250 - 100) / 100
    EXPECT_DOUBLE_EQ(m.e_opt_slowdown_pct, 100.0);            // (2 - 1) / 1
    EXPECT_DOUBLE_EQ(m.t_opt_energy_increase_pct, 200.0);     // (300 - 100) / 100
    EXPECT_DOUBLE_EQ(m.time_gain_for_5pct_energy_pct, 25.0);  // energy <= 105: 1.6 s; (2 - 1.6) / 1.6
    EXPECT_DOUBLE_EQ(m.energy_gain_for_5pct_time_pct, 50.0);  // time <= 1.05: 200 J; (300 - 200) / 200
}

TEST(FrontMetrics, TotalObjectiveUsesTotalEnergy)
{
    std::vector<Distribution> front = {point(2.0, 100, 50), point(1.0, 180, 50)};  // totals 200 and 230
    FrontMetrics m = front_metrics(front, point(1.5, 150, 50), EnergyObjective::Total);
    EXPECT_DOUBLE_EQ(m.e_opt_j, 200);
    EXPECT_DOUBLE_EQ(m.e_at_t_opt_j, 230);
    EXPECT_DOUBLE_EQ(m.lb_energy_saving_pct, 12.5);  // (225 - 200) / 200
    EXPECT_THROW(front_metrics({}, point(1, 1), EnergyObjective::Dynamic), std::invalid_argument);
}
