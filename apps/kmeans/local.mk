# SPDX-License-Identifier: LGPL-2.1-or-later
# kmeans: Lloyd's k-means, each iteration's assignment step one divisible job over the points.

# Every floating-point operation of the assignment is rounded separately (no FMA
# contraction) so the CPU, OpenCL and CUDA codelets agree bit for bit.
hetpu_kmeans_fp_flags = -ffp-contract=off

# Pure cores (options, data, the Lloyd loop and its reference, the checkpoint bytes): no
# StarPU, unit-tested.
noinst_LTLIBRARIES += apps/kmeans/libhetpu_kmeans_core.la
apps_kmeans_libhetpu_kmeans_core_la_SOURCES = \
	apps/kmeans/kmeans_options.cpp apps/kmeans/kmeans_options.h \
	apps/kmeans/kmeans_data.cpp apps/kmeans/kmeans_data.h \
	apps/kmeans/kmeans_lloyd.cpp apps/kmeans/kmeans_lloyd.h apps/kmeans/kmeans_collective.h \
	apps/kmeans/kmeans_checkpoint_format.cpp apps/kmeans/kmeans_checkpoint_format.h
apps_kmeans_libhetpu_kmeans_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(XXHASH_CFLAGS)
apps_kmeans_libhetpu_kmeans_core_la_CXXFLAGS = $(AM_CXXFLAGS) $(OPENMP_CXXFLAGS) $(hetpu_kmeans_fp_flags)
apps_kmeans_libhetpu_kmeans_core_la_LIBADD = apps/common/libhetpu_apps_common.la runtime/libhetpu_core.la \
	$(XXHASH_LIBS)

# StarPU glue: codelets, the per-pass job, checkpoint/restart through libhetpu_ckpt.
noinst_LTLIBRARIES += apps/kmeans/libhetpu_kmeans.la
apps_kmeans_libhetpu_kmeans_la_SOURCES = \
	apps/kmeans/kmeans_codelets.cpp apps/kmeans/kmeans_codelets.h apps/kmeans/kmeans_kernels.h apps/kmeans/kmeans_buffers.h \
	apps/kmeans/kmeans_job.cpp apps/kmeans/kmeans_job.h apps/kmeans/kmeans_mpi_collective.h \
	apps/kmeans/kmeans_checkpoint.cpp apps/kmeans/kmeans_checkpoint.h
apps_kmeans_libhetpu_kmeans_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_kmeans_libhetpu_kmeans_la_CXXFLAGS = $(AM_CXXFLAGS) $(OPENMP_CXXFLAGS) $(hetpu_kmeans_fp_flags)
apps_kmeans_libhetpu_kmeans_la_LIBADD = apps/kmeans/libhetpu_kmeans_core.la
hetpu_kmeans_libs = apps/kmeans/libhetpu_kmeans.la libhetpu.la libhetpu_ckpt.la $(STARPU_LIBS)
if HETPU_OPENCL
apps_kmeans_libhetpu_kmeans_la_SOURCES += apps/kmeans/kmeans_opencl.cpp
apps_kmeans_libhetpu_kmeans_la_CPPFLAGS += $(OPENCL_CFLAGS)
hetpu_kmeans_libs += $(OPENCL_LIBS)
endif

# CUDA: compiled whenever nvcc exists, linked only when StarPU has CUDA workers too.
EXTRA_DIST += apps/kmeans/kmeans_cuda.cu
if HETPU_NVCC
noinst_LIBRARIES += apps/kmeans/libkmeans_cuda.a
apps_kmeans_libkmeans_cuda_a_SOURCES =
apps_kmeans_libkmeans_cuda_a_AR = $(AR) cr
apps_kmeans_libkmeans_cuda_a_LIBADD = apps/kmeans/kmeans_cuda.$(OBJEXT)
CLEANFILES += apps/kmeans/kmeans_cuda.$(OBJEXT)
apps/kmeans/kmeans_cuda.$(OBJEXT): $(srcdir)/apps/kmeans/kmeans_cuda.cu $(srcdir)/apps/kmeans/kmeans_kernels.h \
	$(srcdir)/apps/kmeans/kmeans_buffers.h
	@$(MKDIR_P) apps/kmeans
	$(AM_V_GEN)$(NVCC) -Xcompiler -fPIC,-Wall,-Wextra -std=c++17 -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) \
	  $(STARPU_CFLAGS) $(CUDA_CFLAGS) -c -o $@ $(srcdir)/apps/kmeans/kmeans_cuda.cu
endif
if HETPU_CUDA
hetpu_kmeans_libs += apps/kmeans/libkmeans_cuda.a $(CUDA_LIBS)
endif

bin_PROGRAMS += apps/kmeans/hetpu-kmeans
apps_kmeans_hetpu_kmeans_SOURCES = apps/kmeans/kmeans_main.cpp
apps_kmeans_hetpu_kmeans_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_kmeans_hetpu_kmeans_CXXFLAGS = $(AM_CXXFLAGS) $(OPENMP_CXXFLAGS)
apps_kmeans_hetpu_kmeans_LDADD = $(hetpu_kmeans_libs)

# The programs end to end on the CPU + OpenCL test node; kmeans_restart.sh kills a
# checkpointing run with SIGKILL and checks that --restart ends with the same centroids.
TESTS += tests/cli/kmeans_cli.sh tests/cli/grn_cli.sh tests/cli/kmeans_restart.sh
EXTRA_DIST += tests/cli/kmeans_cli.sh tests/cli/grn_cli.sh tests/cli/kmeans_restart.sh
EXTRA_DIST += bench/apps_policies.sh

# The CUDA kernels against the CPU cores (bit for bit; fft2d to rounding): built whenever nvcc exists (the
# kernels' launch functions need no CUDA StarPU); skips without a CUDA device.
# It has its own main (exit 77 without a device), which takes precedence over gtest_main.
# Against a CUDA StarPU the kernels' objects also hold the StarPU codelet functions, which
# call libstarpu (starpu_cuda_get_local_stream): hence $(STARPU_LIBS).
if HETPU_NVCC
check_PROGRAMS += tests/apps_cuda_tests
tests_apps_cuda_tests_SOURCES = tests/unit/apps/cuda_agreement_test.cpp
tests_apps_cuda_tests_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(CUDA_CFLAGS) $(FFTW_CFLAGS)
tests_apps_cuda_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(OPENMP_CXXFLAGS) -ffp-contract=off
tests_apps_cuda_tests_LDADD = apps/grn/libgrn_cuda.a apps/kmeans/libkmeans_cuda.a apps/fft2d/libfft2d_cuda.a \
	apps/kmeans/libhetpu_kmeans_core.la apps/grn/libhetpu_grn_core.la \
	apps/matmul/libhetpu_matmul_core.la apps/common/libhetpu_apps_common.la runtime/libhetpu_core.la \
	$(GTEST_LIBS) $(STARPU_LIBS) $(CUDA_LIBS) $(FFTW_LIBS)
TESTS += tests/apps_cuda_tests
endif
