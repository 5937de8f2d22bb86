# SPDX-License-Identifier: LGPL-2.1-or-later
# The node-wide MGB arbiter (POSIX shared memory, robust mutex) and the process-local
# ledger behind the same interface, plus the grant trace (HETPU_MGB_TRACE). No StarPU.
noinst_LTLIBRARIES += sched_policies/mgb/arbiter/libhetpu_mgb_arbiter.la
sched_policies_mgb_arbiter_libhetpu_mgb_arbiter_la_SOURCES = \
	sched_policies/mgb/arbiter/ledger_access.cpp sched_policies/mgb/arbiter/ledger_access.h \
	sched_policies/mgb/arbiter/node_arbiter.cpp sched_policies/mgb/arbiter/node_arbiter.h \
	sched_policies/mgb/arbiter/grant_trace.cpp sched_policies/mgb/arbiter/grant_trace.h \
	sched_policies/mgb/arbiter/share_clock.cpp sched_policies/mgb/arbiter/share_clock.h
sched_policies_mgb_arbiter_libhetpu_mgb_arbiter_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)
sched_policies_mgb_arbiter_libhetpu_mgb_arbiter_la_LIBADD = sched_policies/mgb/core/libhetpu_mgb_core.la accounting_hook/libhetpu_device_share.la -lrt -lpthread

# Forks processes that share, race for, and die holding the arbiter's segment.
check_PROGRAMS += tests/mgb_arbiter_tests
tests_mgb_arbiter_tests_SOURCES = \
	tests/unit/mgb_arbiter/arbiter_test_util.h \
	tests/unit/mgb_arbiter/local_ledger_test.cpp \
	tests/unit/mgb_arbiter/node_arbiter_test.cpp \
	tests/unit/mgb_arbiter/grant_trace_test.cpp \
	tests/unit/mgb_arbiter/share_clock_test.cpp
tests_mgb_arbiter_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS)
# The arbiter reads its settings through common/settings (in the core library).
tests_mgb_arbiter_tests_LDADD = sched_policies/mgb/arbiter/libhetpu_mgb_arbiter.la runtime/libhetpu_core.la $(GTEST_LIBS)

TESTS += tests/mgb_arbiter_tests tests/cli/mgb_status.sh
EXTRA_DIST += tests/cli/mgb_status.sh
