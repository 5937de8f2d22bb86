# SPDX-License-Identifier: LGPL-2.1-or-later
# Each family (plbhac/, hdss/, pareto/, mgb/) has its own folder and local.mk, which adds its
# StarPU glue to libhetpu.la and its pure core (no StarPU) to runtime/libhetpu_core.la; what
# they share is here. The load-balancing policies are listed once, in planner_catalog.cpp,
# and load_balancing.cpp registers each with StarPU; mgb's register themselves.
libhetpu_la_SOURCES += \
	sched_policies/component_policy.cpp sched_policies/component_policy.h \
	sched_policies/first_idle_queue.cpp sched_policies/first_idle_queue.h \
	sched_policies/shared_priority_queue.cpp sched_policies/shared_priority_queue.h \
	sched_policies/load_balancing.cpp
runtime_libhetpu_core_la_SOURCES += \
	sched_policies/planner_catalog.cpp sched_policies/planner_catalog.h \
	sched_policies/node_planner.cpp sched_policies/node_planner.h \
	sched_policies/priority_fifo.h

# The load-balancing policies' unit tests: the catalog's here, each family appends its own.
check_PROGRAMS += tests/planner_unit_tests
TESTS += tests/planner_unit_tests
tests_planner_unit_tests_SOURCES = tests/unit/planner_catalog_test.cpp tests/unit/priority_fifo_test.cpp
tests_planner_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS)
tests_planner_unit_tests_LDADD = tools/libhetpu_sim.la runtime/libhetpu_core.la $(GTEST_LIBS)

include sched_policies/plbhac/local.mk
include sched_policies/hdss/local.mk
include sched_policies/pareto/local.mk
