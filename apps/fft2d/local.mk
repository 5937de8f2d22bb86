# SPDX-License-Identifier: LGPL-2.1-or-later
# fft2d: 2D FFT, rows then (after a transposition) columns divided into blocks by hetpu's
# divisible runner. CPU: FFTW; OpenCL: clFFT; CUDA: cuFFT.

# Pure cores (options, matrix + transposition + FFTW verification, result lines).
noinst_LTLIBRARIES += apps/fft2d/libhetpu_fft2d_core.la
apps_fft2d_libhetpu_fft2d_core_la_SOURCES = \
	apps/fft2d/fft2d_options.cpp apps/fft2d/fft2d_options.h \
	apps/fft2d/fft2d_problem.cpp apps/fft2d/fft2d_problem.h \
	apps/fft2d/fft2d_report.cpp apps/fft2d/fft2d_report.h apps/fft2d/fft2d_batches.h
apps_fft2d_libhetpu_fft2d_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(FFTW_CFLAGS)
apps_fft2d_libhetpu_fft2d_core_la_LIBADD = apps/common/libhetpu_apps_common.la $(FFTW_LIBS)

# StarPU glue (codelets, the job) plus the cores: everything but main.
noinst_LTLIBRARIES += apps/fft2d/libhetpu_fft2d.la
apps_fft2d_libhetpu_fft2d_la_SOURCES = \
	apps/fft2d/fft2d_codelets.cpp apps/fft2d/fft2d_codelets.h apps/fft2d/fft2d_kernels.h \
	apps/fft2d/fft2d_job.cpp apps/fft2d/fft2d_job.h
apps_fft2d_libhetpu_fft2d_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS) $(FFTW_CFLAGS)
apps_fft2d_libhetpu_fft2d_la_LIBADD = apps/fft2d/libhetpu_fft2d_core.la
hetpu_fft2d_libs = apps/fft2d/libhetpu_fft2d.la libhetpu.la $(STARPU_LIBS) $(FFTW_LIBS)
if HETPU_CLFFT
apps_fft2d_libhetpu_fft2d_la_SOURCES += apps/fft2d/fft2d_opencl.cpp
apps_fft2d_libhetpu_fft2d_la_CPPFLAGS += $(OPENCL_CFLAGS) $(CLFFT_CFLAGS)
hetpu_fft2d_libs += $(CLFFT_LIBS) $(OPENCL_LIBS)
endif

# CUDA: compiled whenever nvcc exists, linked only when StarPU has CUDA workers too.
EXTRA_DIST += apps/fft2d/fft2d_cuda.cu
if HETPU_NVCC
noinst_LIBRARIES += apps/fft2d/libfft2d_cuda.a
apps_fft2d_libfft2d_cuda_a_SOURCES =
apps_fft2d_libfft2d_cuda_a_AR = $(AR) cr
apps_fft2d_libfft2d_cuda_a_LIBADD = apps/fft2d/fft2d_cuda.$(OBJEXT)
CLEANFILES += apps/fft2d/fft2d_cuda.$(OBJEXT)
apps/fft2d/fft2d_cuda.$(OBJEXT): $(srcdir)/apps/fft2d/fft2d_cuda.cu $(srcdir)/apps/fft2d/fft2d_kernels.h \
		$(srcdir)/apps/fft2d/fft2d_batches.h
	@$(MKDIR_P) apps/fft2d
	$(AM_V_GEN)$(NVCC) -Xcompiler -fPIC,-Wall,-Wextra -std=c++17 -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) \
	  $(STARPU_CFLAGS) $(CUDA_CFLAGS) -c -o $@ $(srcdir)/apps/fft2d/fft2d_cuda.cu
endif
if HETPU_CUDA
hetpu_fft2d_libs += apps/fft2d/libfft2d_cuda.a $(CUDA_LIBS)
endif

bin_PROGRAMS += apps/fft2d/hetpu-fft2d
apps_fft2d_hetpu_fft2d_SOURCES = apps/fft2d/fft2d_main.cpp
apps_fft2d_hetpu_fft2d_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_fft2d_hetpu_fft2d_LDADD = $(hetpu_fft2d_libs)

# Tests: the pure cores, and the app on the CPU + OpenCL node.
check_PROGRAMS += tests/fft2d_unit_tests
tests_fft2d_unit_tests_SOURCES = tests/unit/fft2d/fft2d_core_test.cpp
tests_fft2d_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(FFTW_CFLAGS)
tests_fft2d_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) $(JSON_CFLAGS)
tests_fft2d_unit_tests_LDADD = apps/fft2d/libhetpu_fft2d_core.la apps/matmul/libhetpu_matmul_core.la runtime/libhetpu_core.la $(FFTW_LIBS) $(GTEST_LIBS)
TESTS += tests/fft2d_unit_tests tests/cli/fft2d_cli.sh
EXTRA_DIST += tests/cli/fft2d_cli.sh
