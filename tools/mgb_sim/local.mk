# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu mgb-sim` (tools/mgb_sim/): a batch of GPU jobs on a simulated node, placed by the
# MGB core itself (sched_policies/mgb/core), no StarPU. Linked into tools/hetpu.
noinst_LTLIBRARIES += tools/libhetpu_mgb_sim.la
tools_libhetpu_mgb_sim_la_SOURCES = \
	tools/mgb_sim/scenario.cpp tools/mgb_sim/scenario.h \
	tools/mgb_sim/simulator.cpp tools/mgb_sim/simulator.h \
	tools/mgb_sim/makespan_bound.cpp tools/mgb_sim/makespan_bound.h \
	tools/mgb_sim/mgb_sim_command.cpp tools/mgb_sim/mgb_sim_command.h
tools_libhetpu_mgb_sim_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)
tools_libhetpu_mgb_sim_la_LIBADD = sched_policies/mgb/core/libhetpu_mgb_core.la

tools_hetpu_LDADD += tools/libhetpu_mgb_sim.la

# Unit tests of the simulator: hand-checked tiny scenarios, determinism, scenario errors.
check_PROGRAMS += tests/mgb_sim_tests
tests_mgb_sim_tests_SOURCES = \
	tests/unit/mgb_sim/scenario_test.cpp \
	tests/unit/mgb_sim/simulator_test.cpp \
	tests/unit/mgb_sim/makespan_bound_test.cpp \
	tests/unit/mgb_sim/yardstick_test.cpp
tests_mgb_sim_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS)
tests_mgb_sim_tests_LDADD = tools/libhetpu_mgb_sim.la node_arbiter/libhetpu_node_arbiter_core.la $(GTEST_LIBS)
TESTS += tests/mgb_sim_tests

# The command line: the bound, the co-location models, bad input refused.
TESTS += tests/cli/mgb_sim_cli.sh
EXTRA_DIST += tests/cli/mgb_sim_cli.sh
