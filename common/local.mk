# SPDX-License-Identifier: LGPL-2.1-or-later
# common/: generic helpers any folder may include (pure C++, no StarPU): number parsing,
# text tables, JSON lines, input files, gnuplot, the command-line helper, the settings.
# A shared library: libhetpu, libhetpu_ckpt and node_arbiter's library all use it, and a
# process that loads several of them has one copy (one settings table). Internal: no public
# header. Programs get it through runtime/libhetpu_core.la.
lib_LTLIBRARIES += common/libhetpu_common.la
common_libhetpu_common_la_LDFLAGS = -version-info 0:0:0 -no-undefined
common_libhetpu_common_la_SOURCES = \
	common/trim.h common/input_file.h common/json_line.h common/json_path.h common/cli_args.h \
	common/settings.cpp common/settings.h \
	common/finite_number.cpp common/finite_number.h \
	common/gnuplot_png.cpp common/gnuplot_png.h \
	common/text_table.cpp common/text_table.h \
	common/file_fingerprint.cpp common/file_fingerprint.h

# Unit tests of the helpers (no StarPU).
check_PROGRAMS += tests/common_unit_tests
tests_common_unit_tests_SOURCES = \
	tests/unit/common/finite_number_test.cpp \
	tests/unit/common/settings_test.cpp \
	tests/unit/common/text_table_test.cpp \
	tests/unit/common/file_fingerprint_test.cpp
tests_common_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_common_unit_tests_LDADD = runtime/libhetpu_core.la $(GTEST_LIBS)
TESTS += tests/common_unit_tests
