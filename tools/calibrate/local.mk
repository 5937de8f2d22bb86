# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu calibrate` (tools/calibrate/): pure cores (statistics, options, CSV writer; the
# energy attribution is the accounting core's) and the StarPU glue driving the apps' codelets.
noinst_LTLIBRARIES += tools/libhetpu_calibrate_core.la
tools_libhetpu_calibrate_core_la_SOURCES = \
	tools/calibrate/sample_stats.cpp tools/calibrate/sample_stats.h \
	tools/calibrate/calibrate_options.cpp tools/calibrate/calibrate_options.h \
	tools/calibrate/profile_writer.cpp tools/calibrate/profile_writer.h
tools_libhetpu_calibrate_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(GSL_CFLAGS)
tools_libhetpu_calibrate_core_la_LIBADD = $(GSL_LIBS)

noinst_LTLIBRARIES += tools/libhetpu_calibrate.la
tools_libhetpu_calibrate_la_SOURCES = tools/calibrate/calibrate_command.cpp tools/calibrate/calibrate_command.h
tools_libhetpu_calibrate_la_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(FFTW_CFLAGS) $(OPENCL_CFLAGS)
tools_libhetpu_calibrate_la_LIBADD = tools/libhetpu_calibrate_core.la
EXTRA_DIST += tools/calibrate/README.md

check_PROGRAMS += tests/calibrate_unit_tests
tests_calibrate_unit_tests_SOURCES = tests/unit/calibrate/calibrate_core_test.cpp
tests_calibrate_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) $(GSL_CFLAGS)
tests_calibrate_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_calibrate_unit_tests_LDADD = tools/libhetpu_calibrate_core.la runtime/libhetpu_core.la $(GSL_LIBS) $(GTEST_LIBS)
TESTS += tests/calibrate_unit_tests tests/cli/calibrate_cli.sh
EXTRA_DIST += tests/cli/calibrate_cli.sh
