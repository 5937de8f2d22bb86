# SPDX-License-Identifier: LGPL-2.1-or-later
# The simulator behind `hetpu sim`: pure C++ (no StarPU), driving the same dispatcher and
# planners as the StarPU runner.
noinst_LTLIBRARIES += tools/libhetpu_sim.la
tools_libhetpu_sim_la_SOURCES = \
	tools/sim/scenario.cpp tools/sim/scenario.h \
	tools/sim/simulated_unit.cpp tools/sim/simulated_unit.h \
	tools/sim/optimum.cpp tools/sim/optimum.h \
	tools/sim/simulator.cpp tools/sim/simulator.h \
	tools/sim/static_planner.h \
	tools/sim/scenario_profiles.cpp tools/sim/scenario_profiles.h \
	tools/sim/sim_baselines.cpp tools/sim/sim_baselines.h \
	tools/sim/sim_command.cpp tools/sim/sim_command.h \
	tools/sim/cluster_scenario.cpp tools/sim/cluster_scenario.h \
	tools/sim/cluster_sim.cpp tools/sim/cluster_sim.h \
	tools/sim/cluster_parts.cpp tools/sim/cluster_parts.h \
	tools/sim/cluster_command.cpp tools/sim/cluster_command.h
tools_libhetpu_sim_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)

# `hetpu`: the front program, without StarPU (its CPPFLAGS only for starpu_config.h's
# version macros), so that commands which never start StarPU do not pay for loading it.
bin_PROGRAMS += tools/hetpu
tools_hetpu_SOURCES = tools/hetpu_front.cpp
tools_hetpu_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) -DHETPU_PKGLIBEXECDIR='"$(pkglibexecdir)"'
tools_hetpu_LDADD = tools/libhetpu_sim.la tools/libhetpu_pareto.la
# Only the libraries the front's code calls become its dependencies (the convenience
# libraries carry Ipopt, GSL and BLAS for the cores that use them).
tools_hetpu_LDFLAGS = -Wl,--as-needed

# `hetpu-starpu`: the commands that start StarPU (policies, calibrate), exec()d by the front.
pkglibexec_PROGRAMS = tools/hetpu-starpu
tools_hetpu_starpu_SOURCES = tools/hetpu_starpu.cpp
tools_hetpu_starpu_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
tools_hetpu_starpu_LDADD = tools/libhetpu_calibrate.la \
	apps/matmul/libhetpu_matmul.la apps/fft2d/libhetpu_fft2d.la $(hetpu_matmul_libs) $(hetpu_fft2d_libs) \
	runtime/libhetpu_core.la
# `hetpu mgb status|reset` (tools/mgb/): reads the node-wide arbiter's segment (node_arbiter/).
tools_hetpu_SOURCES += tools/mgb/mgb_command.cpp tools/mgb/mgb_command.h
tools_hetpu_CPPFLAGS += $(JSON_CFLAGS)
tools_hetpu_LDADD += sched_policies/mgb/core/libhetpu_mgb_core.la node_arbiter/libhetpu_node_arbiter_core.la

include tools/pareto/local.mk
include tools/calibrate/local.mk
include tools/mgb_sim/local.mk
include tools/batch/local.mk
# `hetpu settings [--markdown|--check]` (tools/settings/): the HETPU_* settings (common/settings.h).
tools_hetpu_SOURCES += tools/settings/settings_command.cpp tools/settings/settings_command.h
# `hetpu models list|show|clear` (tools/models/): PLB-HAC models saved across runs.
tools_hetpu_SOURCES += tools/models/models_command.cpp tools/models/models_command.h

# Rules of the source tree (no build needed): size limits, generated benchmark tables, no
# issue-tracker numbers.
TESTS += tests/cli/tree_rules.sh
EXTRA_DIST += tests/cli/tree_rules.sh tools/check_code_size.py bench/update_readme_tables.sh
