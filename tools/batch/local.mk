# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu batch` (tools/batch/): a queue of shell commands run N at a time, with per-job
# timeout (process-group kill), exit status, crash and timing records. No StarPU.
noinst_LTLIBRARIES += tools/libhetpu_batch.la
tools_libhetpu_batch_la_SOURCES = \
	tools/batch/batch_runner.cpp tools/batch/batch_runner.h \
	tools/batch/batch_command.cpp tools/batch/batch_command.h
tools_libhetpu_batch_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)

tools_hetpu_LDADD += tools/libhetpu_batch.la

TESTS += tests/cli/batch_cli.sh
EXTRA_DIST += tests/cli/batch_cli.sh
