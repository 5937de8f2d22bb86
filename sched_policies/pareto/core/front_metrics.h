// SPDX-License-Identifier: LGPL-2.1-or-later
// The figures the HEPOPTA paper reports for a Pareto front (Section 9 and the text of Fig. 6/9): the
// two ends, how much they improve on the load-balanced distribution, and what a 5% loss in
// one objective buys in the other. Pure C++, no StarPU.
#pragma once

#include <cstddef>
#include <vector>

#include "sched_policies/pareto/core/pareto_front.h"
#include "sched_policies/pareto/core/pareto_profiles.h"

namespace hetpu {

// "energy" below is dynamic energy for EnergyObjective::Dynamic and total energy for Total.
struct FrontMetrics {
    std::size_t front_size = 0;
    double t_opt_s = 0, e_at_t_opt_j = 0;   // time-optimal end
    double e_opt_j = 0, t_at_e_opt_s = 0;   // energy-optimal end
    double lb_time_s = 0, lb_energy_j = 0;  // load-balanced distribution
    // (t_lb - t_opt) / t_opt * 100: performance improvement of the time-optimal end.
    double lb_time_improvement_pct = 0;
    // (e_lb - e_opt) / e_opt * 100: energy saving of the energy-optimal end.
    double lb_energy_saving_pct = 0;
    // (t at e_opt - t_opt) / t_opt * 100: what optimising energy alone costs in time.
    double e_opt_slowdown_pct = 0;
    // (e at t_opt - e_opt) / e_opt * 100: what optimising time alone costs in energy.
    double t_opt_energy_increase_pct = 0;
    // Accept up to 5% more energy than e_opt: (t at e_opt - t') / t' * 100, t' the least
    // time on the front with energy <= 1.05 e_opt.
    double time_gain_for_5pct_energy_pct = 0;
    // Accept up to 5% more time than t_opt: (e at t_opt - e') / e' * 100, e' the least
    // energy on the front with time <= 1.05 t_opt.
    double energy_gain_for_5pct_time_pct = 0;
};

// `front` as hepopta()/htpopta() return it (non-empty, increasing energy). Throws
// std::invalid_argument for an empty front.
FrontMetrics front_metrics(const std::vector<Distribution> &front, const Distribution &load_balanced,
                           EnergyObjective objective);

// The energy figure of a distribution for an objective.
double energy_of(const Distribution &d, EnergyObjective objective);

}  // namespace hetpu
