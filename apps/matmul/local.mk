# SPDX-License-Identifier: LGPL-2.1-or-later
# matmul: C = A x B, columns of B and C divided into blocks by hetpu's divisible runner.

# Pure cores (options, matrices + verification, result lines): no StarPU, unit-tested.
noinst_LTLIBRARIES += apps/matmul/libhetpu_matmul_core.la
apps_matmul_libhetpu_matmul_core_la_SOURCES = \
	apps/matmul/matmul_options.cpp apps/matmul/matmul_options.h \
	apps/matmul/matmul_problem.cpp apps/matmul/matmul_problem.h \
	apps/matmul/matmul_columns.cpp apps/matmul/matmul_columns.h \
	apps/matmul/matmul_report.cpp apps/matmul/matmul_report.h
apps_matmul_libhetpu_matmul_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS)
apps_matmul_libhetpu_matmul_core_la_LIBADD = apps/common/libhetpu_apps_common.la

# StarPU glue (codelets, the job) plus the cores: everything but main, shared with the
# overhead benchmark.
noinst_LTLIBRARIES += apps/matmul/libhetpu_matmul.la
apps_matmul_libhetpu_matmul_la_SOURCES = \
	apps/matmul/matmul_codelets.cpp apps/matmul/matmul_codelets.h \
	apps/matmul/matmul_kernels.h apps/matmul/gemm_shape.h \
	apps/matmul/matmul_job.cpp apps/matmul/matmul_job.h
apps_matmul_libhetpu_matmul_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS) $(BLAS_CFLAGS)
apps_matmul_libhetpu_matmul_la_LIBADD = apps/matmul/libhetpu_matmul_core.la
# Link flags every program using libhetpu_matmul.la needs (libhetpu itself comes first).
hetpu_matmul_libs = apps/matmul/libhetpu_matmul.la libhetpu.la $(STARPU_LIBS) $(BLAS_LIBS)
if HETPU_OPENCL
apps_matmul_libhetpu_matmul_la_SOURCES += apps/matmul/matmul_opencl.cpp
apps_matmul_libhetpu_matmul_la_CPPFLAGS += $(OPENCL_CFLAGS) $(CLBLAST_CFLAGS)
hetpu_matmul_libs += $(CLBLAST_LIBS) $(OPENCL_LIBS)
endif

# CUDA: compiled whenever nvcc exists (so toolkit breakage shows), linked only when
# StarPU has CUDA workers too.
EXTRA_DIST += apps/matmul/matmul_cuda.cu
if HETPU_NVCC
noinst_LIBRARIES += apps/matmul/libmatmul_cuda.a
apps_matmul_libmatmul_cuda_a_SOURCES =
apps_matmul_libmatmul_cuda_a_AR = $(AR) cr
apps_matmul_libmatmul_cuda_a_LIBADD = apps/matmul/matmul_cuda.$(OBJEXT)
CLEANFILES += apps/matmul/matmul_cuda.$(OBJEXT)
apps/matmul/matmul_cuda.$(OBJEXT): $(srcdir)/apps/matmul/matmul_cuda.cu $(srcdir)/apps/matmul/matmul_kernels.h $(srcdir)/apps/matmul/gemm_shape.h
	@$(MKDIR_P) apps/matmul
	$(AM_V_GEN)$(NVCC) -Xcompiler -fPIC,-Wall,-Wextra -std=c++17 -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) \
	  $(STARPU_CFLAGS) $(CUDA_CFLAGS) -c -o $@ $(srcdir)/apps/matmul/matmul_cuda.cu
endif
if HETPU_CUDA
hetpu_matmul_libs += apps/matmul/libmatmul_cuda.a $(CUDA_LIBS)
endif

bin_PROGRAMS += apps/matmul/hetpu-matmul
apps_matmul_hetpu_matmul_SOURCES = apps/matmul/matmul_main.cpp
apps_matmul_hetpu_matmul_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_matmul_hetpu_matmul_LDADD = $(hetpu_matmul_libs)
