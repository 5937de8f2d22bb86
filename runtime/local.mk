# SPDX-License-Identifier: LGPL-2.1-or-later
# Pure C++ cores: never include starpu.h, unit-tested without StarPU.
noinst_LTLIBRARIES += runtime/libhetpu_core.la
runtime_libhetpu_core_la_SOURCES = \
	runtime/core/policy_catalog.cpp runtime/core/policy_catalog.h \
	runtime/core/block_cursor.cpp runtime/core/block_cursor.h \
	runtime/core/block_planner.h runtime/core/planner_extensions.h \
	runtime/core/block_dispatcher.cpp runtime/core/block_dispatcher.h \
	runtime/core/cluster.cpp runtime/core/cluster.h \
	runtime/core/node_shares.cpp runtime/core/node_shares.h \
	$(hetpu_core_sources)

runtime_libhetpu_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(IPOPT_CFLAGS) $(GSL_CFLAGS)
runtime_libhetpu_core_la_LIBADD = common/libhetpu_common.la $(IPOPT_LIBS) $(GSL_LIBS) $(BLAS_LIBS)

# libhetpu: StarPU glue + policies. Shared only: policies register themselves from static
# initializers, which a static archive would silently drop.
lib_LTLIBRARIES += libhetpu.la
libhetpu_la_SOURCES = \
	runtime/init.cpp runtime/starpu_start.h runtime/run_observer.h \
	runtime/policy_registry.cpp runtime/policy_registry.h \
	runtime/block_run.cpp runtime/block_run.h runtime/codelet_estimate.cpp runtime/codelet_estimate.h runtime/local_run.cpp runtime/mpi_run.cpp runtime/mpi_run.h \
	runtime/mpi_owned_run.cpp runtime/mpi_owned_run.h runtime/node_rates.cpp runtime/node_rates.h runtime/mpi_block_data.cpp runtime/mpi_block_data.h \
	runtime/mpi_rank_report.cpp runtime/mpi_rank_report.h \
	runtime/workers_paused.h \
	runtime/mpi.cpp runtime/mpi_state.h \
	runtime/opencl_on_cpu.cpp runtime/opencl_on_cpu.h \
	runtime/sched_lib_exports.cpp runtime/starpu_compat.h \
	$(hetpu_policy_sources)
libhetpu_la_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
# MPI comes first: Ipopt's sequential MUMPS exports stub MPI_Init/MPI_Comm_rank/MPI_Finalize,
# and whichever library comes first in the loader's search order wins; MPI must.
# libtool puts a convenience library's dependencies (Ipopt's) before LIBADD, so the MPI
# libraries go in LDFLAGS, which come first.
libhetpu_la_LIBADD = runtime/libhetpu_core.la $(STARPU_LIBS)
libhetpu_la_LDFLAGS = -version-info 0:0:0 -no-undefined
# Scale-out (optional): StarPU-MPI and the MPI library, found by configure.
if HETPU_MPI
libhetpu_la_CPPFLAGS += $(STARPUMPI_CFLAGS)
libhetpu_la_LDFLAGS += $(STARPUMPI_LIBS)
endif

hetpuincludedir = $(includedir)/hetpu
nodist_hetpuinclude_HEADERS = include/hetpu/version.h
hetpuinclude_HEADERS = include/hetpu/hetpu.h include/hetpu/divisible.h include/hetpu/mpi.h

# LD_PRELOAD=libhetpu-preload.so puts unmodified StarPU programs under hetpu policies.
lib_LTLIBRARIES += libhetpu-preload.la
libhetpu_preload_la_SOURCES = runtime/preload.cpp
libhetpu_preload_la_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
libhetpu_preload_la_LIBADD = libhetpu.la $(STARPU_LIBS) $(LIBS)
libhetpu_preload_la_LDFLAGS = -module -avoid-version -no-undefined
if HETPU_MPI
libhetpu_preload_la_CPPFLAGS += $(STARPUMPI_CFLAGS)
libhetpu_preload_la_LIBADD += $(STARPUMPI_LIBS)
endif

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = hetpu.pc
EXTRA_DIST += hetpu.pc.in
noinst_HEADERS += runtime/mpi_gather.h
