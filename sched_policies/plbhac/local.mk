# SPDX-License-Identifier: LGPL-2.1-or-later
# PLB-HAC: its planner's pure core (no StarPU), compiled into runtime/libhetpu_core.la and
# registered in sched_policies/planner_catalog.cpp.
runtime_libhetpu_core_la_SOURCES += \
	sched_policies/plbhac/core/plbhac_time_curve.h \
	sched_policies/plbhac/core/plbhac_makespan_nlp.cpp sched_policies/plbhac/core/plbhac_makespan_nlp.h \
	sched_policies/plbhac/core/plbhac_equal_finish.cpp sched_policies/plbhac/core/plbhac_equal_finish.h \
	sched_policies/plbhac/core/plbhac_rounding.cpp sched_policies/plbhac/core/plbhac_rounding.h \
	sched_policies/plbhac/core/plbhac_solve.cpp sched_policies/plbhac/core/plbhac_solve.h \
	sched_policies/plbhac/core/plbhac_straggle.cpp sched_policies/plbhac/core/plbhac_straggle.h \
	sched_policies/plbhac/core/plbhac_state.h \
	sched_policies/plbhac/core/plbhac_options.cpp sched_policies/plbhac/core/plbhac_options.h \
	sched_policies/plbhac/core/plbhac_trace.cpp sched_policies/plbhac/core/plbhac_trace.h \
	sched_policies/plbhac/core/plbhac_latency.cpp sched_policies/plbhac/core/plbhac_latency.h \
	sched_policies/plbhac/core/plbhac_pu.cpp sched_policies/plbhac/core/plbhac_pu.h \
	sched_policies/plbhac/core/plbhac_training.cpp sched_policies/plbhac/core/plbhac_training.h \
	sched_policies/plbhac/core/plbhac_steps.cpp sched_policies/plbhac/core/plbhac_steps.h \
	sched_policies/plbhac/core/plbhac_trust.cpp sched_policies/plbhac/core/plbhac_trust.h \
	sched_policies/plbhac/core/plbhac_step_solve.cpp sched_policies/plbhac/core/plbhac_step_solve.h \
	sched_policies/plbhac/core/plbhac_final.cpp sched_policies/plbhac/core/plbhac_final.h \
	sched_policies/plbhac/core/plbhac_execution.cpp sched_policies/plbhac/core/plbhac_execution.h \
	sched_policies/plbhac/core/plbhac_measure.cpp sched_policies/plbhac/core/plbhac_measure.h \
	sched_policies/plbhac/core/plbhac_warm_start.cpp sched_policies/plbhac/core/plbhac_warm_start.h \
	sched_policies/plbhac/core/plbhac_codelet_start.cpp sched_policies/plbhac/core/plbhac_codelet_start.h \
	sched_policies/plbhac/core/plbhac_planner.cpp sched_policies/plbhac/core/plbhac_planner.h \
	sched_policies/plbhac/core/plbhac_unit_fit.cpp sched_policies/plbhac/core/plbhac_unit_fit.h \
	sched_policies/plbhac/core/plbhac_ladder.cpp sched_policies/plbhac/core/plbhac_ladder.h \
	sched_policies/plbhac/core/plbhac_model_store.cpp sched_policies/plbhac/core/plbhac_model_store.h \
	sched_policies/plbhac/core/plbhac_model_shelf.cpp sched_policies/plbhac/core/plbhac_model_shelf.h \
	sched_policies/plbhac/core/plbhac_family.cpp sched_policies/plbhac/core/plbhac_family.h
# PLB-HAC's persisted models are JSON files (plbhac_model_store.cpp).
runtime_libhetpu_core_la_CPPFLAGS += $(JSON_CFLAGS)
