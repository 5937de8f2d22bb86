# SPDX-License-Identifier: LGPL-2.1-or-later
# HEPOPTA / HTPOPTA / HPOPTA: exact time/energy Pareto distributions. Their pure cores,
# compiled into runtime/libhetpu_core.la; hepopta and htpopta are registered in
# sched_policies/planner_catalog.cpp.
runtime_libhetpu_core_la_SOURCES += \
	sched_policies/pareto/core/pareto_profiles.cpp sched_policies/pareto/core/pareto_profiles.h \
	sched_policies/pareto/core/profile_table.cpp sched_policies/pareto/core/profile_table.h \
	sched_policies/pareto/core/pareto_workspace.cpp sched_policies/pareto/core/pareto_workspace.h \
	sched_policies/pareto/core/workspace_buffers.h \
	sched_policies/pareto/core/cheapest_within.cpp sched_policies/pareto/core/cheapest_within.h \
	sched_policies/pareto/core/suffix_bounds.cpp sched_policies/pareto/core/suffix_bounds.h \
	sched_policies/pareto/core/pareto_front.cpp sched_policies/pareto/core/pareto_front.h \
	sched_policies/pareto/core/hpopta.cpp sched_policies/pareto/core/hpopta.h \
	sched_policies/pareto/core/shifted_bits.h \
	sched_policies/pareto/core/min_energy.cpp sched_policies/pareto/core/min_energy.h \
	sched_policies/pareto/core/hepopta.cpp sched_policies/pareto/core/hepopta.h \
	sched_policies/pareto/core/profile_csv.cpp sched_policies/pareto/core/profile_csv.h \
	sched_policies/pareto/core/profile_store.cpp sched_policies/pareto/core/profile_store.h \
	sched_policies/pareto/core/front_cache.cpp sched_policies/pareto/core/front_cache.h \
	sched_policies/pareto/core/load_balanced.cpp sched_policies/pareto/core/load_balanced.h \
	sched_policies/pareto/core/front_metrics.cpp sched_policies/pareto/core/front_metrics.h \
	sched_policies/pareto/core/tradeoff.cpp sched_policies/pareto/core/tradeoff.h \
	sched_policies/pareto/core/pareto_planner.cpp sched_policies/pareto/core/pareto_planner.h \
	sched_policies/pareto/core/pareto_family.cpp sched_policies/pareto/core/pareto_family.h
