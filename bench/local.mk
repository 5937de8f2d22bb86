# SPDX-License-Identifier: LGPL-2.1-or-later
# Benchmarks (run by `./run bench`); not installed.

# hetpu + StarPU (1 CPU worker) vs direct single-threaded cblas_dgemm on the same matrices.
noinst_PROGRAMS += bench/matmul_overhead
bench_matmul_overhead_SOURCES = bench/matmul_overhead.cpp
bench_matmul_overhead_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(BLAS_CFLAGS)
bench_matmul_overhead_LDADD = $(hetpu_matmul_libs)

# HEPOPTA/HTPOPTA/HPOPTA speed for p = 2..8 processors and m = 50..500 points per profile.
noinst_PROGRAMS += bench/pareto_speed
bench_pareto_speed_SOURCES = bench/pareto_speed.cpp bench/heap_counter.h
bench_pareto_speed_LDADD = runtime/libhetpu_core.la

# Median Ipopt block-size solve time for 2, 4 and 8 PUs (paper: ~100 ms per virtual step).
noinst_PROGRAMS += bench/plbhac_solve_speed
bench_plbhac_solve_speed_SOURCES = bench/plbhac_solve_speed.cpp
bench_plbhac_solve_speed_LDADD = runtime/libhetpu_core.la

# Time and quality of a PU's curve choice (select_curve): the default screen vs a converged one.
noinst_PROGRAMS += bench/plbhac_decision_speed
bench_plbhac_decision_speed_SOURCES = bench/plbhac_decision_speed.cpp
bench_plbhac_decision_speed_CXXFLAGS = $(AM_CXXFLAGS) $(JSON_CFLAGS)
bench_plbhac_decision_speed_LDADD = runtime/libhetpu_core.la

noinst_PROGRAMS += bench/curve_select_speed
bench_curve_select_speed_SOURCES = bench/curve_select_speed.cpp
bench_curve_select_speed_LDADD = runtime/libhetpu_core.la

# RTM-like checkpoint workload: blocking per checkpoint and restore throughput (ckpt_backend).
noinst_PROGRAMS += bench/ckpt_rtm
bench_ckpt_rtm_SOURCES = bench/ckpt_rtm.cpp
bench_ckpt_rtm_CXXFLAGS = $(AM_CXXFLAGS) -pthread
bench_ckpt_rtm_LDADD = ckpt_backend/libhetpu_ckpt_engine.la runtime/libhetpu_core.la

# Peer balancing across 8 simulated GPUs: local-only and greedy vs min-time max-flow.
# Device-resident data: blocking per checkpoint, device cache tier vs host tier (run by ckpt_device.sh).
noinst_PROGRAMS += bench/ckpt_device
bench_ckpt_device_SOURCES = bench/ckpt_device.cpp bench/ckpt_bench_node.h
bench_ckpt_device_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
bench_ckpt_device_LDADD = libhetpu_ckpt.la $(STARPU_LIBS) $(OPENCL_LIBS)
if HETPU_CUDA
# CUDA devices too (bench/gpu_node.sh's ckpt phase): the touch task is a copy on the worker's stream.
bench_ckpt_device_CPPFLAGS += $(CUDA_CFLAGS)
bench_ckpt_device_LDADD += $(CUDA_LIBS)
endif
EXTRA_DIST += bench/ckpt_device.sh bench/ckpt_pocl_node.sh

# The RTM-like workload over StarPU with its blocks on accelerators: blocking per checkpoint,
# device cache tier vs host tier, and the backward pass with and without restore hints, every
# restored version checked (run by ckpt_rtm_device.sh and tests/ckpt/rtm_device.sh).
noinst_PROGRAMS += bench/ckpt_rtm_device
bench_ckpt_rtm_device_SOURCES = bench/ckpt_rtm_starpu.cpp bench/ckpt_rtm_codelets.cpp bench/ckpt_rtm_codelets.h \
	bench/ckpt_rtm_kernels.h bench/ckpt_bench_node.h
bench_ckpt_rtm_device_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
bench_ckpt_rtm_device_LDADD = libhetpu_ckpt.la $(STARPU_LIBS) $(OPENCL_LIBS)
EXTRA_DIST += bench/ckpt_rtm_device.sh bench/ckpt_rtm_cuda.cu
# Its CUDA kernels: compiled whenever nvcc exists, linked only when StarPU has CUDA workers too.
if HETPU_NVCC
noinst_LIBRARIES += bench/libckpt_rtm_cuda.a
bench_libckpt_rtm_cuda_a_SOURCES =
bench_libckpt_rtm_cuda_a_AR = $(AR) cr
bench_libckpt_rtm_cuda_a_LIBADD = bench/ckpt_rtm_cuda.$(OBJEXT)
CLEANFILES += bench/ckpt_rtm_cuda.$(OBJEXT)
bench/ckpt_rtm_cuda.$(OBJEXT): $(srcdir)/bench/ckpt_rtm_cuda.cu $(srcdir)/bench/ckpt_rtm_kernels.h
	@$(MKDIR_P) bench
	$(AM_V_GEN)$(NVCC) -Xcompiler -fPIC,-Wall,-Wextra -std=c++17 -I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) \
	  $(STARPU_CFLAGS) $(CUDA_CFLAGS) -c -o $@ $(srcdir)/bench/ckpt_rtm_cuda.cu
endif
if HETPU_CUDA
bench_ckpt_rtm_device_CPPFLAGS += $(CUDA_CFLAGS)
bench_ckpt_rtm_device_LDADD += bench/libckpt_rtm_cuda.a $(CUDA_LIBS)
endif
EXTRA_DIST += bench/accounting_packing.sh

noinst_PROGRAMS += bench/ckpt_peer
bench_ckpt_peer_SOURCES = bench/ckpt_peer.cpp
bench_ckpt_peer_LDADD = ckpt_backend/libhetpu_ckpt_core.la runtime/libhetpu_core.la
# The peer schedule's worst time and heap over bandwidth ratios 1 to 1e12, 2 to 16 devices.
noinst_PROGRAMS += bench/ckpt_peer_schedule_speed
bench_ckpt_peer_schedule_speed_SOURCES = bench/ckpt_peer_schedule_speed.cpp bench/heap_counter.h \
	ckpt_backend/core/random_peer_problem.h
bench_ckpt_peer_schedule_speed_LDADD = ckpt_backend/libhetpu_ckpt_core.la runtime/libhetpu_core.la
EXTRA_DIST += bench/ckpt_plot.sh

# MGB evaluation (`./run bench mgb`): scripts only, driving tools/hetpu (mgb-sim, batch).
EXTRA_DIST += bench/mgb/gen_workloads.py bench/mgb/sim_bench.py bench/mgb/real_batch.sh \
	bench/mgb/bound_eval.py bench/mgb/small_exact.py bench/mgb/arrivals.py bench/mgb/README.md \
	bench/mgb/colocation_bench.py
EXTRA_DIST += bench/sim_makespans.py bench/plbhac_cold_start_sim.py bench/plbhac_models_sim.sh bench/plbhac_node_limit.sh \
	bench/plbhac_random_sim.py bench/plbhac_ramp_bound.py \
	bench/plbhac_node_family.py \
	bench/plbhac_lib_ab.sh bench/plbhac_static_split.sh bench/real_node_apps.sh \
	bench/real_node_verified.py
EXTRA_DIST += bench/starpu_examples_sweep.sh bench/starpu_test_suite.sh
EXTRA_DIST += bench/README.md bench/plbhac_sim.sh bench/plbhac_matmul.sh bench/mpi_scaling_sim.sh bench/mpi_scaling_summary.py \
	bench/mpi_slow_rank.sh bench/mpi_planners.sh bench/cluster_links.sh bench/scenarios bench/plbhac_gpu_node_sim.sh bench/gpu_node.sh
# The benchmark outputs bench/README.md's tables are generated from (bench/update_readme_tables.sh).
EXTRA_DIST += bench/recorded/mgb_bound_eval.md bench/recorded/mgb_small_exact.md bench/recorded/mgb_arrivals.md \
	bench/recorded/mgb_colocation_time_sliced.md bench/recorded/mgb_colocation_mps.md \
	bench/recorded/mpi_scaling_sim.md bench/recorded/plbhac_cold_start.md bench/recorded/starpu_examples_timing.md \
	bench/recorded/mgb_real_batch.md
