# SPDX-License-Identifier: LGPL-2.1-or-later
# MGB's pure core (no StarPU): task footprints, the placement algorithms (Alg. 2, Alg. 3,
# SA and CG) over the node's device ledger (node_arbiter/core), and the wait queue.
# Unit-tested without StarPU. Whoever links it links node_arbiter too (libhetpu_node_arbiter
# for a library, its pure core for a program): it carries no copy of it.
noinst_LTLIBRARIES += sched_policies/mgb/core/libhetpu_mgb_core.la
sched_policies_mgb_core_libhetpu_mgb_core_la_SOURCES = \
	sched_policies/mgb/core/task_needs.cpp sched_policies/mgb/core/task_needs.h \
	sched_policies/mgb/core/colocation.cpp sched_policies/mgb/core/colocation.h \
	sched_policies/mgb/core/gpu_ledger.cpp sched_policies/mgb/core/gpu_ledger.h \
	sched_policies/mgb/core/wait_queue.cpp sched_policies/mgb/core/wait_queue.h

check_PROGRAMS += tests/mgb_core_tests
tests_mgb_core_tests_SOURCES = \
	tests/unit/mgb/ledger_test_util.h \
	tests/unit/mgb/task_needs_test.cpp \
	tests/unit/mgb/ledger_exact_test.cpp \
	tests/unit/mgb/ledger_least_warps_test.cpp \
	tests/unit/mgb/ledger_baselines_test.cpp \
	tests/unit/mgb/ledger_bookkeeping_test.cpp \
	tests/unit/mgb/wait_queue_test.cpp \
	tests/unit/mgb/ledger_mixed_node_test.cpp \
	tests/unit/mgb/colocation_test.cpp \
	tests/unit/mgb/ledger_time_sliced_test.cpp
tests_mgb_core_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_mgb_core_tests_LDADD = sched_policies/mgb/core/libhetpu_mgb_core.la node_arbiter/libhetpu_node_arbiter_core.la $(GTEST_LIBS)
TESTS += tests/mgb_core_tests

# Per-device data residency of one process's tasks (the needs API's "a handle counts once").
sched_policies_mgb_core_libhetpu_mgb_core_la_SOURCES += \
	sched_policies/mgb/core/handle_residency.cpp sched_policies/mgb/core/handle_residency.h
tests_mgb_core_tests_SOURCES += tests/unit/mgb/handle_residency_test.cpp

# Completions of handed-out tasks followed through their callbacks (StarPU skips
# post_exec_hook for the tasks it submits itself).
sched_policies_mgb_core_libhetpu_mgb_core_la_SOURCES += \
	sched_policies/mgb/core/completion_watch.cpp sched_policies/mgb/core/completion_watch.h
tests_mgb_core_tests_SOURCES += tests/unit/mgb/completion_watch_test.cpp
