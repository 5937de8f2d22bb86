# SPDX-License-Identifier: LGPL-2.1-or-later
# heat: a Jacobi/heat stencil whose blocks stay on the accelerators, checkpointed from
# device memory through libhetpu_ckpt's device tier.

# Every operation rounded separately (no FMA contraction) so that the CPU, OpenCL and CUDA
# codelets agree bit for bit.
hetpu_heat_fp_flags = -ffp-contract=off

# Pure core (the grid, its blocks, the sweep and its reference, the options): no StarPU,
# unit-tested.
noinst_LTLIBRARIES += apps/heat/libhetpu_heat_core.la
apps_heat_libhetpu_heat_core_la_SOURCES = \
	apps/heat/heat_grid.cpp apps/heat/heat_grid.h apps/heat/heat_kernels.h \
	apps/heat/heat_options.cpp apps/heat/heat_options.h apps/heat/heat_checkpoint_header.h
apps_heat_libhetpu_heat_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(XXHASH_CFLAGS)
apps_heat_libhetpu_heat_core_la_CXXFLAGS = $(AM_CXXFLAGS) $(hetpu_heat_fp_flags)
apps_heat_libhetpu_heat_core_la_LIBADD = apps/common/libhetpu_apps_common.la runtime/libhetpu_core.la $(XXHASH_LIBS)

# StarPU glue: codelets, the blocked grid, checkpoint/restart through libhetpu_ckpt.
noinst_LTLIBRARIES += apps/heat/libhetpu_heat.la
apps_heat_libhetpu_heat_la_SOURCES = \
	apps/heat/heat_codelets.cpp apps/heat/heat_codelets.h \
	apps/heat/heat_job.cpp apps/heat/heat_job.h \
	apps/heat/heat_checkpoint.cpp apps/heat/heat_checkpoint.h
apps_heat_libhetpu_heat_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_heat_libhetpu_heat_la_CXXFLAGS = $(AM_CXXFLAGS) $(hetpu_heat_fp_flags)
apps_heat_libhetpu_heat_la_LIBADD = apps/heat/libhetpu_heat_core.la
hetpu_heat_libs = apps/heat/libhetpu_heat.la libhetpu.la libhetpu_ckpt.la $(STARPU_LIBS)
if HETPU_OPENCL
apps_heat_libhetpu_heat_la_SOURCES += apps/heat/heat_opencl.cpp
apps_heat_libhetpu_heat_la_CPPFLAGS += $(OPENCL_CFLAGS)
hetpu_heat_libs += $(OPENCL_LIBS)
endif

# CUDA: compiled whenever nvcc exists, linked only when StarPU has CUDA workers too.
EXTRA_DIST += apps/heat/heat_cuda.cu
if HETPU_NVCC
noinst_LIBRARIES += apps/heat/libheat_cuda.a
apps_heat_libheat_cuda_a_SOURCES =
apps_heat_libheat_cuda_a_AR = $(AR) cr
apps_heat_libheat_cuda_a_LIBADD = apps/heat/heat_cuda.$(OBJEXT)
CLEANFILES += apps/heat/heat_cuda.$(OBJEXT)
apps/heat/heat_cuda.$(OBJEXT): $(srcdir)/apps/heat/heat_cuda.cu $(srcdir)/apps/heat/heat_kernels.h
	@$(MKDIR_P) apps/heat
	$(AM_V_GEN)$(NVCC) -Xcompiler -fPIC,-Wall,-Wextra -std=c++17 -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) \
	  $(STARPU_CFLAGS) $(CUDA_CFLAGS) -c -o $@ $(srcdir)/apps/heat/heat_cuda.cu
endif
if HETPU_CUDA
hetpu_heat_libs += apps/heat/libheat_cuda.a $(CUDA_LIBS)
endif

bin_PROGRAMS += apps/heat/hetpu-heat
apps_heat_hetpu_heat_SOURCES = apps/heat/heat_main.cpp
apps_heat_hetpu_heat_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_heat_hetpu_heat_LDADD = $(hetpu_heat_libs)

# The pure core: the blocked sweep against the whole-grid reference, the options.
check_PROGRAMS += tests/heat_unit_tests
tests_heat_unit_tests_SOURCES = tests/unit/apps/heat_test.cpp
tests_heat_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS) $(hetpu_heat_fp_flags)
tests_heat_unit_tests_LDADD = apps/heat/libhetpu_heat_core.la apps/common/libhetpu_apps_common.la \
	runtime/libhetpu_core.la $(GTEST_LIBS)
TESTS += tests/heat_unit_tests

# On the CPU + OpenCL node: every codelet against the host sweep, the options' errors. On two
# PoCL devices: a checkpointing run killed with SIGKILL, restarted, byte-exact, its captures
# taken from device memory.
TESTS += tests/cli/heat_cli.sh tests/ckpt/heat_restart.sh
EXTRA_DIST += tests/cli/heat_cli.sh tests/ckpt/heat_restart.sh
