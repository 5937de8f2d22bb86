# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu pareto` (tools/pareto/) and the tests of the Pareto tooling: the profile CSV, the
# load-balanced distribution, the paper's metrics, the trade-off choice and the planner of
# the hepopta/htpopta policies (cores in sched_policies/pareto/core/).
noinst_LTLIBRARIES += tools/libhetpu_pareto.la
tools_libhetpu_pareto_la_SOURCES = tools/pareto/pareto_command.cpp tools/pareto/pareto_command.h
EXTRA_DIST += tools/pareto/README.md

check_PROGRAMS += tests/pareto_unit_tests
tests_pareto_unit_tests_SOURCES = \
	tests/unit/pareto/profile_csv_test.cpp \
	tests/unit/pareto/load_balanced_test.cpp \
	tests/unit/pareto/front_metrics_test.cpp \
	tests/unit/pareto/tradeoff_test.cpp \
	tests/unit/pareto/pareto_planner_test.cpp \
	tests/unit/pareto/front_cache_test.cpp \
	tests/unit/pareto/pareto_cli_test.cpp \
	tests/unit/pareto/workspace_test.cpp \
	tests/unit/pareto/pareto_cases_test.cpp \
	tests/unit/pareto/pareto_oracle_test.cpp
tests_pareto_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS)
tests_pareto_unit_tests_LDADD = tools/libhetpu_pareto.la runtime/libhetpu_core.la $(GTEST_LIBS)

TESTS += tests/pareto_unit_tests tests/cli/pareto_cli.sh tests/cli/hepopta_cli.sh
EXTRA_DIST += tests/cli/pareto_cli.sh tests/cli/hepopta_cli.sh
EXTRA_DIST += bench/pareto_real.sh bench/pareto_cli_speed.sh bench/hetpu_startup.py bench/random_profile.py
