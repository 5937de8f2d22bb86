# SPDX-License-Identifier: LGPL-2.1-or-later
# node_arbiter/: what the processes of one node share about its accelerators. The device
# ledger (core/device_ledger: devices, grants, processes), the device specs, the share
# integral and energy split (core/device_share), the node-wide arbiter that keeps one ledger
# in POSIX shared memory under a robust mutex, its share clock and grant trace, and device
# discovery (the one file that needs StarPU). sched_policies/mgb places tasks with it,
# ckpt_backend reserves device memory with it, accounting_hook reads its share clock; none of
# them includes another.

# The pure part (no StarPU), for the programs and tests that must not load StarPU
# (the `hetpu` front: `hetpu mgb status`, `hetpu su`).
noinst_LTLIBRARIES += node_arbiter/libhetpu_node_arbiter_core.la
node_arbiter_libhetpu_node_arbiter_core_la_SOURCES = \
	node_arbiter/core/gpu_spec.cpp node_arbiter/core/gpu_spec.h \
	node_arbiter/core/device_ledger.cpp node_arbiter/core/device_ledger.h \
	node_arbiter/core/device_share.cpp node_arbiter/core/device_share.h \
	node_arbiter/ledger_access.cpp node_arbiter/ledger_access.h \
	node_arbiter/node_arbiter.cpp node_arbiter/node_arbiter.h \
	node_arbiter/grant_trace.cpp node_arbiter/grant_trace.h \
	node_arbiter/share_clock.cpp node_arbiter/share_clock.h
node_arbiter_libhetpu_node_arbiter_core_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)
node_arbiter_libhetpu_node_arbiter_core_la_LIBADD = common/libhetpu_common.la -lrt -lpthread

# The same code and device discovery as one shared library, which libhetpu and libhetpu_ckpt
# both link: a process that loads both has one arbiter, one share clock and one copy of
# their state. Internal: no public header, no pkg-config file of its own.
lib_LTLIBRARIES += node_arbiter/libhetpu_node_arbiter.la
node_arbiter_libhetpu_node_arbiter_la_SOURCES = \
	node_arbiter/device_discovery.cpp node_arbiter/device_discovery.h
node_arbiter_libhetpu_node_arbiter_la_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
node_arbiter_libhetpu_node_arbiter_la_LIBADD = node_arbiter/libhetpu_node_arbiter_core.la $(STARPU_LIBS) $(OPENCL_LIBS)
node_arbiter_libhetpu_node_arbiter_la_LDFLAGS = -version-info 0:0:0 -no-undefined
if HETPU_CUDA
# Device discovery reads cudaDeviceProp (SM counts, per-SM limits, PCI bus ids).
node_arbiter_libhetpu_node_arbiter_la_CPPFLAGS += $(CUDA_CFLAGS)
endif

# Forks processes that share, race for, and die holding the arbiter's segment. The helpers
# place tasks with MGB's algorithms (sched_policies/mgb/core) to fill the ledger.
check_PROGRAMS += tests/node_arbiter_tests
tests_node_arbiter_tests_SOURCES = \
	tests/unit/node_arbiter/arbiter_test_util.h \
	tests/unit/node_arbiter/local_ledger_test.cpp \
	tests/unit/node_arbiter/node_arbiter_test.cpp \
	tests/unit/node_arbiter/grant_trace_test.cpp \
	tests/unit/node_arbiter/share_clock_test.cpp \
	tests/unit/node_arbiter/gpu_spec_test.cpp \
	tests/unit/node_arbiter/device_share_test.cpp
tests_node_arbiter_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS)
tests_node_arbiter_tests_LDADD = sched_policies/mgb/core/libhetpu_mgb_core.la node_arbiter/libhetpu_node_arbiter_core.la \
	$(GTEST_LIBS)

TESTS += tests/node_arbiter_tests tests/cli/mgb_status.sh
EXTRA_DIST += tests/cli/mgb_status.sh

# No code linked into two of hetpu's shared libraries (one arbiter per process).
TESTS += tests/cli/linked_once.sh
EXTRA_DIST += tests/cli/linked_once.sh
