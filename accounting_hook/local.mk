# SPDX-License-Identifier: LGPL-2.1-or-later
# accounting_hook: energy-based SU accounting (the accounting paper) — pure model, ledger, StarPU hook.
# Appends to libhetpu_la_* (runtime/local.mk) and tools_hetpu_LDADD (tools/local.mk), so it
# must stay included after those two in Makefile.am.

# Pure cores: the SU model, comparison models, Slurm billing and allocation, the TOML
# partition config, energy attribution, the SQLite ledger. No StarPU.
noinst_LTLIBRARIES += accounting_hook/libhetpu_accounting_core.la
accounting_hook_libhetpu_accounting_core_la_SOURCES = \
	accounting_hook/core/partition.cpp accounting_hook/core/partition.h \
	accounting_hook/core/su_model.cpp accounting_hook/core/su_model.h \
	accounting_hook/core/comparison_models.cpp accounting_hook/core/comparison_models.h \
	accounting_hook/core/benchmark_csv.cpp accounting_hook/core/benchmark_csv.h \
	accounting_hook/core/slurm_billing.cpp accounting_hook/core/slurm_billing.h \
	accounting_hook/core/slurm_allocation.cpp accounting_hook/core/slurm_allocation.h \
	accounting_hook/core/partition_config.cpp accounting_hook/core/partition_config.h \
	accounting_hook/core/energy_attribution.cpp accounting_hook/core/energy_attribution.h \
	accounting_hook/core/job_record.h \
	accounting_hook/core/job_json.cpp accounting_hook/core/job_json.h \
	accounting_hook/core/run_charge.cpp accounting_hook/core/run_charge.h \
	accounting_hook/core/ledger.cpp accounting_hook/core/ledger.h \
	accounting_hook/core/rank_merge.cpp accounting_hook/core/rank_merge.h \
	accounting_hook/core/shared_device_charge.cpp accounting_hook/core/shared_device_charge.h
accounting_hook_libhetpu_accounting_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(TOML_CFLAGS) $(SQLITE_CFLAGS) $(JSON_CFLAGS)
# The share integral and energy split of shared devices (node_arbiter/core/device_share) come
# from node_arbiter: libhetpu links its shared library, tools/hetpu its pure core.
accounting_hook_libhetpu_accounting_core_la_LIBADD = $(TOML_LIBS) $(SQLITE_LIBS)

EXTRA_DIST += accounting_hook/examples/table1_system.toml accounting_hook/examples/nvidia_benchmarks.csv

# Unit tests of the cores (no StarPU).
check_PROGRAMS += tests/accounting/accounting_unit_tests
tests_accounting_accounting_unit_tests_SOURCES = \
	tests/unit/accounting/fake_energy_source.h \
	tests/unit/accounting/su_model_test.cpp \
	tests/unit/accounting/paper_tables_test.cpp \
	tests/unit/accounting/slurm_test.cpp \
	tests/unit/accounting/partition_config_test.cpp \
	tests/unit/accounting/energy_attribution_test.cpp \
	tests/unit/accounting/run_charge_test.cpp \
	tests/unit/accounting/ledger_test.cpp \
	tests/unit/accounting/rank_merge_test.cpp \
	tests/unit/accounting/shared_device_charge_test.cpp
tests_accounting_accounting_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_accounting_accounting_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_accounting_accounting_unit_tests_LDADD = accounting_hook/libhetpu_accounting_core.la node_arbiter/libhetpu_node_arbiter_core.la runtime/libhetpu_core.la $(SQLITE_LIBS) $(GTEST_LIBS)
TESTS += tests/accounting/accounting_unit_tests

# StarPU glue, inside libhetpu (runtime/start/init.cpp wraps the resolved policy with it).
libhetpu_la_SOURCES += \
	accounting_hook/accounting_hook.cpp accounting_hook/accounting_hook.h \
	accounting_hook/local_node.cpp accounting_hook/local_node.h \
	accounting_hook/shared_devices.cpp accounting_hook/shared_devices.h
libhetpu_la_CPPFLAGS += $(HWLOC_CFLAGS)
libhetpu_la_LIBADD += accounting_hook/libhetpu_accounting_core.la $(HWLOC_LIBS)

# `hetpu su rate|charge|compare|report` (tools/su/), linked into tools/hetpu.
noinst_LTLIBRARIES += tools/su/libhetpu_su.la
tools_su_libhetpu_su_la_SOURCES = \
	tools/su/su_command.cpp tools/su/su_command.h \
	tools/su/su_options.cpp tools/su/su_options.h \
	tools/su/su_compare.cpp tools/su/su_compare.h \
	tools/su/su_report.cpp tools/su/su_report.h
tools_su_libhetpu_su_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)
tools_hetpu_LDADD += tools/su/libhetpu_su.la accounting_hook/libhetpu_accounting_core.la runtime/libhetpu_core.la

# End to end: hetpu su on the paper's system, the hook on real runs (matmul, preloaded
# plain_starpu), concurrent runs, kill -9, corrupt ledger.
TESTS += tests/accounting/accounting_cli.sh tests/accounting/shared_gpu.sh
EXTRA_DIST += tests/accounting/accounting_cli.sh tests/accounting/shared_gpu.sh

# Hook overhead: N tiny tasks with and without accounting in one process (./run bench accounting).
noinst_PROGRAMS += bench/accounting_overhead
bench_accounting_overhead_SOURCES = bench/accounting_overhead.cpp
bench_accounting_overhead_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
bench_accounting_overhead_LDADD = libhetpu.la runtime/libhetpu_core.la $(STARPU_LIBS)

# The hook on a real StarPU node: wrapped hooks still run, every task counted, off means off.
check_PROGRAMS += tests/accounting/accounting_hook_tests
tests_accounting_accounting_hook_tests_SOURCES = tests/accounting/hook_test.cpp
tests_accounting_accounting_hook_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
tests_accounting_accounting_hook_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_accounting_accounting_hook_tests_LDADD = libhetpu.la accounting_hook/libhetpu_accounting_core.la $(STARPU_LIBS) $(GTEST_LIBS)
TESTS += tests/accounting/accounting_hook_tests
