# SPDX-License-Identifier: LGPL-2.1-or-later
# One file per policy; each registers itself with HETPU_REGISTER_POLICY.
hetpu_policy_sources = \
	sched_policies/central_queue.cpp sched_policies/central_queue.h \
	sched_policies/greedy.cpp \
	sched_policies/plbhac.cpp \
	sched_policies/hdss.cpp \
	sched_policies/pareto_policy.cpp sched_policies/pareto_policy.h \
	sched_policies/hepopta.cpp \
	sched_policies/htpopta.cpp

# Pure cores of the policies (no StarPU), compiled into runtime/libhetpu_core.la.
# HEPOPTA / HTPOPTA / HPOPTA: exact time/energy Pareto distributions.
hetpu_core_sources = \
	sched_policies/core/pareto_profiles.cpp sched_policies/core/pareto_profiles.h \
	sched_policies/core/profile_table.cpp sched_policies/core/profile_table.h \
	sched_policies/core/cheapest_within.cpp sched_policies/core/cheapest_within.h \
	sched_policies/core/suffix_bounds.cpp sched_policies/core/suffix_bounds.h \
	sched_policies/core/pareto_front.cpp sched_policies/core/pareto_front.h \
	sched_policies/core/hpopta.cpp sched_policies/core/hpopta.h \
	sched_policies/core/shifted_bits.h \
	sched_policies/core/min_energy.cpp sched_policies/core/min_energy.h \
	sched_policies/core/hepopta.cpp sched_policies/core/hepopta.h \
	sched_policies/core/profile_csv.cpp sched_policies/core/profile_csv.h \
	sched_policies/core/profile_store.cpp sched_policies/core/profile_store.h \
	sched_policies/core/front_cache.cpp sched_policies/core/front_cache.h \
	sched_policies/core/load_balanced.cpp sched_policies/core/load_balanced.h \
	sched_policies/core/front_metrics.cpp sched_policies/core/front_metrics.h \
	sched_policies/core/tradeoff.cpp sched_policies/core/tradeoff.h \
	sched_policies/core/pareto_planner.cpp sched_policies/core/pareto_planner.h \
	sched_policies/core/plbhac_time_curve.h \
	sched_policies/core/plbhac_makespan_nlp.cpp sched_policies/core/plbhac_makespan_nlp.h \
	sched_policies/core/plbhac_equal_finish.cpp sched_policies/core/plbhac_equal_finish.h \
	sched_policies/core/plbhac_rounding.cpp sched_policies/core/plbhac_rounding.h \
	sched_policies/core/plbhac_solve.cpp sched_policies/core/plbhac_solve.h \
	sched_policies/core/plbhac_straggle.cpp sched_policies/core/plbhac_straggle.h \
	sched_policies/core/plbhac_planner.cpp sched_policies/core/plbhac_planner.h \
	sched_policies/core/plbhac_model_store.cpp sched_policies/core/plbhac_model_store.h \
	sched_policies/core/hdss_planner.cpp sched_policies/core/hdss_planner.h \
	perfmodels/core/curve_basis.cpp perfmodels/core/curve_basis.h \
	perfmodels/core/curve_fit.cpp perfmodels/core/curve_fit.h \
	perfmodels/core/curve_select.cpp perfmodels/core/curve_select.h \
	perfmodels/core/fitted_curve.cpp perfmodels/core/fitted_curve.h \
	perfmodels/core/observation_log.cpp perfmodels/core/observation_log.h \
	perfmodels/core/online_model.cpp perfmodels/core/online_model.h \
	perfmodels/core/transfer_model.cpp perfmodels/core/transfer_model.h
# PLB-HAC's persisted models are JSON files (sched_policies/core/plbhac_model_store.cpp).
runtime_libhetpu_core_la_CPPFLAGS += $(JSON_CFLAGS)
