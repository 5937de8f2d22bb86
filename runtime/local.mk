# SPDX-License-Identifier: LGPL-2.1-or-later
# Pure C++ cores: never include starpu.h, unit-tested without StarPU.
# The policy families (sched_policies/<family>/local.mk), perfmodels and common add their
# own pure cores to this library.
noinst_LTLIBRARIES += runtime/libhetpu_core.la
runtime_libhetpu_core_la_SOURCES = \
	runtime/start/core/policy_catalog.cpp runtime/start/core/policy_catalog.h \
	runtime/divisible/core/block_cursor.cpp runtime/divisible/core/block_cursor.h \
	runtime/divisible/core/block_planner.h runtime/divisible/core/planner_extensions.h \
	runtime/divisible/core/block_dispatcher.cpp runtime/divisible/core/block_dispatcher.h \
	runtime/divisible/core/unit_queues.h \
	runtime/divisible/core/backup_choice.cpp runtime/divisible/core/backup_choice.h \
	runtime/divisible/task_ledger.cpp runtime/divisible/task_ledger.h \
	runtime/mpi/core/cluster.cpp runtime/mpi/core/cluster.h \
	runtime/mpi/core/node_shares.cpp runtime/mpi/core/node_shares.h \
	runtime/mpi/core/owned_messages.h \
	runtime/mpi/core/share_coordinator.cpp runtime/mpi/core/share_coordinator.h \
	runtime/mpi/core/progress_reports.cpp runtime/mpi/core/progress_reports.h \
	runtime/mpi/core/coordinator_cadence.cpp runtime/mpi/core/coordinator_cadence.h \
	runtime/mpi/core/range_moves.cpp runtime/mpi/core/range_moves.h \
	runtime/mpi/core/link_probe.cpp runtime/mpi/core/link_probe.h \
	runtime/mpi/core/rank_liveness.cpp runtime/mpi/core/rank_liveness.h

runtime_libhetpu_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(IPOPT_CFLAGS) $(GSL_CFLAGS)
runtime_libhetpu_core_la_LIBADD = common/libhetpu_common.la $(IPOPT_LIBS) $(GSL_LIBS) $(BLAS_LIBS)

# libhetpu: StarPU glue + policies. Shared only: policies register themselves from static
# initializers, which a static archive would silently drop.
lib_LTLIBRARIES += libhetpu.la
# start/: hetpu_init(), the preload library's and STARPU_SCHED_LIB's entries, the policies.
libhetpu_la_SOURCES = \
	runtime/start/init.cpp runtime/start/starpu_start.h runtime/start/run_observer.h \
	runtime/start/policy_registry.cpp runtime/start/policy_registry.h \
	runtime/start/opencl_on_cpu.cpp runtime/start/opencl_on_cpu.h \
	runtime/start/sched_lib_exports.cpp runtime/start/starpu_compat.h
# divisible/: the single-process runner and what the multi-rank runners share with it.
libhetpu_la_SOURCES += \
	runtime/divisible/block_run.cpp runtime/divisible/block_run.h \
	runtime/divisible/copies_running.cpp runtime/divisible/copies_running.h \
	runtime/divisible/run_copies.cpp runtime/divisible/run_copies.h \
	runtime/divisible/codelet_estimate.cpp runtime/divisible/codelet_estimate.h \
	runtime/divisible/idle_codelet.cpp runtime/divisible/idle_codelet.h \
	runtime/divisible/local_run.cpp runtime/divisible/workers_paused.h
# mpi/: scale-out; the central runner (mpi_run) and the per-node one (mpi_owned_run, with
# its roles owned_*), compiled in every build (empty without StarPU-MPI).
libhetpu_la_SOURCES += \
	runtime/mpi/mpi.cpp runtime/mpi/mpi_state.h \
	runtime/mpi/mpi_run.cpp runtime/mpi/mpi_run.h \
	runtime/mpi/mpi_owned_run.cpp runtime/mpi/mpi_owned_run.h \
	runtime/mpi/owned_context.h runtime/mpi/owned_rank.cpp runtime/mpi/owned_rank.h \
	runtime/mpi/owned_lender.cpp runtime/mpi/owned_lender.h \
	runtime/mpi/owned_borrower.cpp runtime/mpi/owned_borrower.h \
	runtime/mpi/owned_coordinator.cpp runtime/mpi/owned_coordinator.h \
	runtime/mpi/node_rates.cpp runtime/mpi/node_rates.h \
	runtime/mpi/mpi_block_data.cpp runtime/mpi/mpi_block_data.h \
	runtime/mpi/mpi_rank_report.cpp runtime/mpi/mpi_rank_report.h \
	runtime/mpi/mpi_link_probe.cpp runtime/mpi/mpi_link_probe.h \
	runtime/mpi/rank_watch.cpp runtime/mpi/rank_watch.h
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
libhetpu_preload_la_SOURCES = runtime/start/preload.cpp
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
noinst_HEADERS += runtime/mpi/mpi_gather.h

# The runtime's pure cores, without StarPU or MPI (tests/unit/runtime/ mirrors runtime/).
check_PROGRAMS += tests/runtime_unit_tests
tests_runtime_unit_tests_SOURCES = \
	tests/unit/runtime/start/core/policy_catalog_test.cpp \
	tests/unit/runtime/divisible/core/block_cursor_test.cpp \
	tests/unit/runtime/divisible/core/block_dispatcher_test.cpp \
	tests/unit/runtime/divisible/core/unit_queues_test.cpp \
	tests/unit/runtime/divisible/task_ledger_test.cpp \
	tests/unit/runtime/mpi/core/cluster_test.cpp \
	tests/unit/runtime/mpi/core/node_shares_test.cpp \
	tests/unit/runtime/mpi/core/share_coordinator_test.cpp \
	tests/unit/runtime/mpi/core/progress_reports_test.cpp \
	tests/unit/runtime/mpi/core/range_moves_test.cpp \
	tests/unit/runtime/mpi/core/link_probe_test.cpp \
	tests/unit/runtime/mpi/core/rank_liveness_test.cpp
tests_runtime_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_runtime_unit_tests_LDADD = runtime/libhetpu_core.la $(GTEST_LIBS)
TESTS += tests/runtime_unit_tests
