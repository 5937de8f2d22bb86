# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/common: pieces the four apps share (the command line, the JSON run record, a
# platform-independent generator). Pure C++.
noinst_LTLIBRARIES += apps/common/libhetpu_apps_common.la
apps_common_libhetpu_apps_common_la_SOURCES = \
	apps/common/app_options.cpp apps/common/app_options.h \
	apps/common/app_record.cpp apps/common/app_record.h apps/common/app_checkpoint.h \
	apps/common/splitmix.h apps/common/divisible_workers.h apps/common/run_with_starpu.h \
	apps/common/output_file.h apps/common/run_output.h apps/common/block_codelet.h \
	apps/common/opencl_kernels.h apps/common/pinned_host_memory.h apps/common/rank_reports.h \
	apps/common/result_digest.h
# CLI11 parses the command lines (common/cli_args.h), finite_number the real numbers.
apps_common_libhetpu_apps_common_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS)
apps_common_libhetpu_apps_common_la_LIBADD = runtime/libhetpu_core.la

# Unit tests of the apps' pure cores (matmul, grn, kmeans, apps/common): no StarPU.
check_PROGRAMS += tests/apps_unit_tests
tests_apps_unit_tests_SOURCES = \
	tests/unit/apps/matmul_options_test.cpp \
	tests/unit/apps/matmul_verify_test.cpp \
	tests/unit/apps/matmul_report_test.cpp \
	tests/unit/apps/app_record_test.cpp \
	tests/unit/apps/job_signature_test.cpp \
	tests/unit/apps/kmeans_test.cpp \
	tests/unit/apps/kmeans_checkpoint_test.cpp \
	tests/unit/apps/kmeans_split_test.cpp \
	tests/unit/apps/grn_test.cpp
tests_apps_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS) $(OPENMP_CXXFLAGS) -ffp-contract=off
tests_apps_unit_tests_LDADD = apps/kmeans/libhetpu_kmeans_core.la apps/grn/libhetpu_grn_core.la \
	apps/matmul/libhetpu_matmul_core.la apps/common/libhetpu_apps_common.la runtime/libhetpu_core.la $(GTEST_LIBS)
TESTS += tests/apps_unit_tests

# The GPU needs each app's codelets declare to the mgb policies (include/hetpu/gpu_needs.h),
# asked for the way the scheduler asks, on StarPU with one CPU worker.
check_PROGRAMS += tests/apps_gpu_needs_tests
tests_apps_gpu_needs_tests_SOURCES = tests/unit/apps/gpu_needs_test.cpp
tests_apps_gpu_needs_tests_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
tests_apps_gpu_needs_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(OPENMP_CXXFLAGS)
tests_apps_gpu_needs_tests_LDADD = $(hetpu_matmul_libs) $(hetpu_grn_libs) $(hetpu_kmeans_libs) $(hetpu_fft2d_libs) \
	$(GTEST_LIBS)
TESTS += tests/apps_gpu_needs_tests

# The four apps under the mgb policies, verified, on the CPU + OpenCL node and on the
# two-device node with unequal memory limits.
TESTS += tests/cli/mgb_apps.sh
EXTRA_DIST += tests/cli/mgb_apps.sh

# Every app with no arguments (its default problem, verified), --help, and bad values.
TESTS += tests/cli/apps_defaults.sh
EXTRA_DIST += tests/cli/apps_defaults.sh

# The four apps with a backup copy of every block: bit-identical results on a CPU-only node,
# verified on the CPU + OpenCL node under plb-hac, eager and dmda.
TESTS += tests/cli/backup_copies.sh
EXTRA_DIST += tests/cli/backup_copies.sh
