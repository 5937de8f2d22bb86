// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/front_metrics.h"

#include <stdexcept>

namespace hetpu {

double energy_of(const Distribution &d, EnergyObjective objective)
{
    return objective == EnergyObjective::Dynamic ? d.dynamic_energy_j : d.total_energy_j;
}

namespace {

double pct(double worse, double better) { return better > 0 ? (worse - better) / better * 100.0 : 0.0; }

}  // namespace

FrontMetrics front_metrics(const std::vector<Distribution> &front, const Distribution &lb, EnergyObjective objective)
{
    if (front.empty())
        throw std::invalid_argument("front_metrics: empty front");
    FrontMetrics m;
    m.front_size = front.size();
    const Distribution &e_end = front.front();
    const Distribution &t_end = front.back();
    m.t_opt_s = t_end.time_s;
    m.e_at_t_opt_j = energy_of(t_end, objective);
    m.e_opt_j = energy_of(e_end, objective);
    m.t_at_e_opt_s = e_end.time_s;
    m.lb_time_s = lb.time_s;
    m.lb_energy_j = energy_of(lb, objective);
    m.lb_time_improvement_pct = pct(m.lb_time_s, m.t_opt_s);
    m.lb_energy_saving_pct = pct(m.lb_energy_j, m.e_opt_j);
    m.e_opt_slowdown_pct = pct(m.t_at_e_opt_s, m.t_opt_s);
    m.t_opt_energy_increase_pct = pct(m.e_at_t_opt_j, m.e_opt_j);

    double t_within = m.t_at_e_opt_s;  // least time with energy <= 1.05 e_opt
    double e_within = m.e_at_t_opt_j;  // least energy with time <= 1.05 t_opt
    for (const Distribution &d : front) {
        if (energy_of(d, objective) <= 1.05 * m.e_opt_j && d.time_s < t_within)
            t_within = d.time_s;
        if (d.time_s <= 1.05 * m.t_opt_s && energy_of(d, objective) < e_within)
            e_within = energy_of(d, objective);
    }
    m.time_gain_for_5pct_energy_pct = pct(m.t_at_e_opt_s, t_within);
    m.energy_gain_for_5pct_time_pct = pct(m.e_at_t_opt_j, e_within);
    return m;
}

}  // namespace hetpu
