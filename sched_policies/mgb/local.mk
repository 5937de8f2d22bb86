# SPDX-License-Identifier: LGPL-2.1-or-later
# MGB's StarPU policies (mgb, mgb-exact, sa, cg): thin glue over sched_policies/mgb/core,
# the needs API (include/hetpu/gpu_needs.h), and the node arbiter (node_arbiter/: device
# discovery, the device ledger, the node-wide arbiter).
libhetpu_la_SOURCES += \
	sched_policies/mgb/mgb_scheduler.cpp sched_policies/mgb/mgb_scheduler.h \
	sched_policies/mgb/scheduler.h sched_policies/mgb/scheduler_devices.cpp sched_policies/mgb/scheduler_queue.cpp \
	sched_policies/mgb/gpu_needs_registry.cpp sched_policies/mgb/gpu_needs_registry.h \
	sched_policies/mgb/mgb.cpp \
	sched_policies/mgb/mgb_exact.cpp \
	sched_policies/mgb/sa.cpp \
	sched_policies/mgb/cg.cpp
libhetpu_la_CPPFLAGS += $(JSON_CFLAGS)
libhetpu_la_LIBADD += sched_policies/mgb/core/libhetpu_mgb_core.la node_arbiter/libhetpu_node_arbiter.la $(OPENCL_LIBS)
hetpuinclude_HEADERS += include/hetpu/gpu_needs.h

# The overflow program: an ordinary StarPU program (preload tests) and the same source
# started through hetpu_init() with declared launch sizes.
# Built with the project (not only for make check): ./run demo shows MGB with it.
noinst_PROGRAMS += tests/programs/mgb_overflow tests/programs/mgb_overflow_hetpu
tests_programs_mgb_overflow_SOURCES = tests/programs/mgb_overflow.c
tests_programs_mgb_overflow_CFLAGS = $(AM_CFLAGS) $(STARPU_CFLAGS)
tests_programs_mgb_overflow_LDADD = $(STARPU_LIBS) $(OPENCL_LIBS)
tests_programs_mgb_overflow_hetpu_SOURCES = tests/programs/mgb_overflow.c
tests_programs_mgb_overflow_hetpu_CFLAGS = $(AM_CFLAGS) $(STARPU_CFLAGS) -DWITH_HETPU
tests_programs_mgb_overflow_hetpu_LDADD = libhetpu.la $(STARPU_LIBS) $(OPENCL_LIBS)

TESTS += tests/cli/mgb_node.sh tests/cli/mgb_cuda_syntax.sh tests/cli/mgb_mixed_limits.sh
EXTRA_DIST += tests/cli/mgb_node.sh tests/cli/mgb_cuda_syntax.sh tests/cli/mgb_mixed_limits.sh

# The policies on the test node (1 CPU + 1 OpenCL worker), through hetpu_init().
check_PROGRAMS += tests/mgb_integration_tests
tests_mgb_integration_tests_SOURCES = \
	tests/integration/add_one_codelet.cpp tests/integration/add_one_codelet.h \
	tests/integration/mgb_test.cpp
tests_mgb_integration_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
tests_mgb_integration_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_mgb_integration_tests_LDADD = libhetpu.la $(STARPU_LIBS) $(OPENCL_LIBS) $(GTEST_LIBS)
TESTS += tests/mgb_integration_tests
