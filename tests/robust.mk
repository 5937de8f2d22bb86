# SPDX-License-Identifier: LGPL-2.1-or-later
# Robustness tests: concurrent start-up, task priorities, bad input, the
# checkpoint directory lock. A fragment of its own so the other local.mk files stay as they are.

# Linked against StarPU only, like plain_starpu: the test puts it under the preload library.
check_PROGRAMS += tests/programs/concurrent_init
tests_programs_concurrent_init_SOURCES = tests/programs/concurrent_init.c
tests_programs_concurrent_init_CFLAGS = $(AM_CFLAGS) $(STARPU_CFLAGS) -pthread
tests_programs_concurrent_init_LDADD = $(STARPU_LIBS) -lpthread

TESTS += tests/cli/concurrent_start.sh
EXTRA_DIST += tests/cli/concurrent_start.sh

TESTS += tests/cli/bad_input.sh
EXTRA_DIST += tests/cli/bad_input.sh
# The fuzz harnesses and their seed corpora (./run fuzz builds them with clang).
EXTRA_DIST += tests/fuzz
