# SPDX-License-Identifier: LGPL-2.1-or-later
# grn: gene regulatory network inference by exhaustive search; the candidate predictor
# subsets are the divisible elements.

# The scores must be bit-identical on every device: no FMA contraction anywhere.
hetpu_grn_fp_flags = -ffp-contract=off

# Pure cores (options, data and discretisation, the search and its reference).
noinst_LTLIBRARIES += apps/grn/libhetpu_grn_core.la
apps_grn_libhetpu_grn_core_la_SOURCES = \
	apps/grn/grn_options.cpp apps/grn/grn_options.h \
	apps/grn/grn_data.cpp apps/grn/grn_data.h \
	apps/grn/grn_search.cpp apps/grn/grn_search.h apps/grn/grn_score.h
apps_grn_libhetpu_grn_core_la_CXXFLAGS = $(AM_CXXFLAGS) $(OPENMP_CXXFLAGS) $(hetpu_grn_fp_flags)
apps_grn_libhetpu_grn_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS)
apps_grn_libhetpu_grn_core_la_LIBADD = apps/common/libhetpu_apps_common.la runtime/libhetpu_core.la

# The OpenCL program is compiled from grn_score.h's own text: turn it into a C string.
apps/grn/grn_score_cl.inc: $(srcdir)/apps/grn/grn_score.h
	@$(MKDIR_P) apps/grn
	$(AM_V_GEN)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(srcdir)/apps/grn/grn_score.h >$@.tmp && mv $@.tmp $@
CLEANFILES += apps/grn/grn_score_cl.inc

# StarPU glue: codelets and the search job.
noinst_LTLIBRARIES += apps/grn/libhetpu_grn.la
apps_grn_libhetpu_grn_la_SOURCES = \
	apps/grn/grn_codelets.cpp apps/grn/grn_codelets.h apps/grn/grn_kernels.h \
	apps/grn/grn_job.cpp apps/grn/grn_job.h
apps_grn_libhetpu_grn_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_grn_libhetpu_grn_la_CXXFLAGS = $(AM_CXXFLAGS) $(OPENMP_CXXFLAGS) $(hetpu_grn_fp_flags)
apps_grn_libhetpu_grn_la_LIBADD = apps/grn/libhetpu_grn_core.la
hetpu_grn_libs = apps/grn/libhetpu_grn.la libhetpu.la $(STARPU_LIBS)
if HETPU_OPENCL
apps_grn_libhetpu_grn_la_SOURCES += apps/grn/grn_opencl.cpp
apps_grn_libhetpu_grn_la_CPPFLAGS += $(OPENCL_CFLAGS)
hetpu_grn_libs += $(OPENCL_LIBS)
# Made before anything compiles (a rule naming the object itself would replace automake's
# compile rule for it, leaving the object to be built only as a side effect of another's).
BUILT_SOURCES += apps/grn/grn_score_cl.inc
endif

# CUDA: compiled whenever nvcc exists, linked only when StarPU has CUDA workers too.
EXTRA_DIST += apps/grn/grn_cuda.cu
if HETPU_NVCC
noinst_LIBRARIES += apps/grn/libgrn_cuda.a
apps_grn_libgrn_cuda_a_SOURCES =
apps_grn_libgrn_cuda_a_AR = $(AR) cr
apps_grn_libgrn_cuda_a_LIBADD = apps/grn/grn_cuda.$(OBJEXT)
CLEANFILES += apps/grn/grn_cuda.$(OBJEXT)
apps/grn/grn_cuda.$(OBJEXT): $(srcdir)/apps/grn/grn_cuda.cu $(srcdir)/apps/grn/grn_kernels.h $(srcdir)/apps/grn/grn_score.h
	@$(MKDIR_P) apps/grn
	$(AM_V_GEN)$(NVCC) -Xcompiler -fPIC,-Wall,-Wextra -std=c++17 -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) \
	  $(STARPU_CFLAGS) $(CUDA_CFLAGS) -c -o $@ $(srcdir)/apps/grn/grn_cuda.cu
endif
if HETPU_CUDA
hetpu_grn_libs += apps/grn/libgrn_cuda.a $(CUDA_LIBS)
endif

bin_PROGRAMS += apps/grn/hetpu-grn
apps_grn_hetpu_grn_SOURCES = apps/grn/grn_main.cpp
apps_grn_hetpu_grn_CPPFLAGS = $(AM_CPPFLAGS) $(JSON_CFLAGS) $(STARPU_CFLAGS)
apps_grn_hetpu_grn_CXXFLAGS = $(AM_CXXFLAGS) $(OPENMP_CXXFLAGS)
apps_grn_hetpu_grn_LDADD = $(hetpu_grn_libs)
