# SPDX-License-Identifier: LGPL-2.1-or-later
# make check: pure-core unit tests (no StarPU), integration tests on a real StarPU node
# (1 CPU worker + 1 OpenCL worker on PoCL), and shell tests of the programs.
AM_TESTS_ENVIRONMENT = \
	export HETPU_BUILDDIR='$(abs_top_builddir)'; \
	export STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_SILENT=1; \
	export POCL_MAX_PTHREAD_COUNT=1; \
	export STARPU_HOME=`mktemp -d "$${TMPDIR:-/tmp}/hetpu-check.XXXXXX"`; \
	trap 'rm -rf "$$STARPU_HOME"' EXIT; \
	export HETPU_LEDGER="$$STARPU_HOME/ledger.sqlite"; \
	export HETPU_MGB_ARBITER=off;
# Each test's StarPU home is its own and goes with it (the trap runs when the recipe's
# shell ends, after the test driver). Accounting is on by default: never the user's ledger. MGB policies: never the user's
# node-wide segment (the tests of the arbiter name their own).

# A watchdog per test program: a hang (once seen, not reproduced, in the divisible runner's
# error path on an overloaded machine) must fail that test with a clear status (124), not
# stall the whole suite until CI's own limit.
TEST_EXTENSIONS = .sh
LOG_COMPILER = timeout 900
SH_LOG_COMPILER = timeout 900

check_PROGRAMS += tests/unit_tests tests/integration_tests tests/programs/plain_starpu

tests_unit_tests_SOURCES = \
	tests/unit/sim_test.cpp tests/unit/cluster_sim_test.cpp \
	tests/unit/plbhac/plbhac_solve_test.cpp \
	tests/unit/plbhac/plbhac_equal_finish_test.cpp \
	tests/unit/plbhac/plbhac_straggle_test.cpp \
	tests/unit/quadratic_time_curve.h \
	tests/unit/thrown_message.h \
	tests/unit/plbhac/plbhac_planner_test_util.h \
	tests/unit/plbhac/plbhac_training_test.cpp \
	tests/unit/plbhac/plbhac_steps_test.cpp \
	tests/unit/plbhac/plbhac_trust_test.cpp \
	tests/unit/plbhac/plbhac_final_test.cpp \
	tests/unit/plbhac/plbhac_execution_test.cpp \
	tests/unit/plbhac/plbhac_measure_test.cpp \
	tests/unit/plbhac/plbhac_latency_test.cpp \
	tests/unit/plbhac/plbhac_warm_start_test.cpp \
	tests/unit/plbhac/plbhac_codelet_start_test.cpp \
	tests/unit/plbhac/plbhac_options_test.cpp \
	tests/unit/plbhac/plbhac_sim_test.cpp \
	tests/unit/plbhac/plbhac_ladder_test.cpp \
	tests/unit/hdss/hdss_planner_test.cpp
tests_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
# The app cores use runtime/libhetpu_core.la (finite_number, for the command lines), so they come first.
tests_unit_tests_LDADD = apps/matmul/libhetpu_matmul_core.la tools/libhetpu_sim.la runtime/libhetpu_core.la $(GTEST_LIBS)

tests_integration_tests_SOURCES = \
	tests/integration/add_one_codelet.cpp tests/integration/add_one_codelet.h \
	tests/integration/add_one_job.cpp tests/integration/add_one_job.h tests/integration/scoped_env.h \
	tests/integration/init_test.cpp \
	tests/integration/divisible_test.cpp \
	tests/integration/backup_copies_test.cpp \
	tests/integration/withdrawn_blocks_test.cpp \
	tests/integration/ordinary_tasks_test.cpp \
	tests/integration/placement_test.cpp \
	tests/integration/starpu_behaviour_test.cpp
tests_integration_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
tests_integration_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_integration_tests_LDADD = libhetpu.la $(STARPU_LIBS) $(OPENCL_LIBS) $(GTEST_LIBS)

# Deliberately linked against StarPU only: the preload test puts it under hetpu.
tests_programs_plain_starpu_SOURCES = tests/programs/plain_starpu.c
tests_programs_plain_starpu_CFLAGS = $(AM_CFLAGS) $(STARPU_CFLAGS)
tests_programs_plain_starpu_LDADD = $(STARPU_LIBS)

# Uses more of StarPU (dependencies, tags, callbacks, OpenCL-only tasks): every policy runs it.
check_PROGRAMS += tests/programs/dag_starpu
tests_programs_dag_starpu_SOURCES = tests/programs/dag_starpu.c
tests_programs_dag_starpu_CFLAGS = $(AM_CFLAGS) $(STARPU_CFLAGS)
tests_programs_dag_starpu_LDADD = $(STARPU_LIBS)
if HETPU_OPENCL
tests_programs_dag_starpu_CFLAGS += -DDAG_WITH_OPENCL $(OPENCL_CFLAGS)
tests_programs_dag_starpu_LDADD += $(OPENCL_LIBS)
endif
TESTS += tests/cli/preload_dag.sh
EXTRA_DIST += tests/cli/preload_dag.sh
# StarPU 1.4's STARPU_SCHED_LIB route to a hetpu policy (skipped on StarPU 1.3, which lacks it).
TESTS += tests/cli/sched_lib.sh
EXTRA_DIST += tests/cli/sched_lib.sh
AM_TESTS_ENVIRONMENT += export HETPU_STARPU_PC='$(STARPU_PC)';
# StarPU's own example programs (Debian's starpu-examples) under every hetpu policy.
TESTS += tests/cli/starpu_examples.sh
EXTRA_DIST += tests/cli/starpu_examples.sh

TESTS += tests/unit_tests tests/integration_tests tests/cli/preload.sh tests/cli/hetpu_tool.sh tests/cli/matmul_cli.sh tests/cli/sim_cli.sh
EXTRA_DIST += tests/cli/node_env.sh tests/cli/catch_run.sh tests/cli/preload.sh tests/cli/hetpu_tool.sh tests/cli/matmul_cli.sh tests/cli/sim_cli.sh
# The settings module: the docs' generated tables, start-up rejection of invalid values, HETPU_VERBOSE.
TESTS += tests/cli/settings.sh
EXTRA_DIST += tests/cli/settings.sh tools/update_settings_table.sh

# Scale-out: matmul over 2 and 3 MPI ranks (skipped, exit 77, without MPI or mpirun).
TESTS += tests/cli/mpi_matmul.sh tests/cli/mpi_apps.sh tests/cli/mpi_kmeans_restart.sh tests/cli/mpi_owned.sh
EXTRA_DIST += tests/cli/mpi_env.sh tests/cli/mpi_matmul.sh tests/cli/mpi_apps.sh tests/cli/mpi_kmeans_restart.sh tests/cli/mpi_owned.sh
# The scale-out on real links: four nodes as network namespaces on this machine, links shaped
# with tc, ranks launched into them by OpenMPI, MPI over TCP (skipped, exit 77, without root).
TESTS += tests/cluster/mpi_links.sh
EXTRA_DIST += tests/cluster/mpi_links.sh tests/cluster/netns_cluster.sh
# Failures of one rank (no worker, bad policy, bad arguments, a different job) end the
# whole launch with a message naming the rank, never a hang.
TESTS += tests/cli/mpi_failures.sh
EXTRA_DIST += tests/cli/mpi_failures.sh
# A rank stopped beyond HETPU_MPI_LIVENESS_S ends the job; one stopped within it continues.
TESTS += tests/cli/mpi_liveness.sh
EXTRA_DIST += tests/cli/mpi_liveness.sh
# Every app's multi-rank record, under both planners, against docs/cluster.md's table.
TESTS += tests/cli/mpi_records.sh
EXTRA_DIST += tests/cli/mpi_records.sh
# A build without MPI: one task under a launcher runs, several are refused (skipped, 77,
# in builds with MPI).
TESTS += tests/cli/no_mpi_launch.sh
EXTRA_DIST += tests/cli/no_mpi_launch.sh

# Linked against StarPU-MPI only: the MPI preload test puts it under hetpu on 2 ranks.
if HETPU_MPI
check_PROGRAMS += tests/programs/plain_starpu_mpi
tests_programs_plain_starpu_mpi_SOURCES = tests/programs/plain_starpu_mpi.c
tests_programs_plain_starpu_mpi_CFLAGS = $(AM_CFLAGS) $(STARPUMPI_CFLAGS)
tests_programs_plain_starpu_mpi_LDADD = $(STARPUMPI_LIBS)
endif
TESTS += tests/cli/mpi_preload.sh
EXTRA_DIST += tests/cli/mpi_preload.sh
# PLB-HAC models persisted across runs (sched_policies/plbhac/core/plbhac_model_store.h).
tests_unit_tests_SOURCES += tests/unit/plbhac/plbhac_model_store_test.cpp
TESTS += tests/cli/models_cli.sh
EXTRA_DIST += tests/cli/models_cli.sh
TESTS += tests/cli/plbhac_starpu_start.sh
EXTRA_DIST += tests/cli/plbhac_starpu_start.sh
# plb-hac saves its models under $HETPU_HOME: never into the user's during make check.
AM_TESTS_ENVIRONMENT += export HETPU_HOME="$$STARPU_HOME/hetpu-home";
# A stress loop run by hand (minutes): StarPU's OpenMP tests under every hetpu policy.
EXTRA_DIST += tests/stress/starpu_openmp_loop.sh

# hetpu under a real Slurm: ./run slurm-check (not make check: it installs Slurm, munge,
# slurmdbd and MariaDB, and runs their daemons as root; CI runs it as a step of its own).
EXTRA_DIST += tests/slurm/cluster.sh tests/slurm/slurm_check.sh tests/slurm/job_lib.sh tests/slurm/check_ledger.py \
	tests/slurm/accounting.sh tests/slurm/mpi.sh tests/slurm/batch_cancel.sh
