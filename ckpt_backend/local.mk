# SPDX-License-Identifier: LGPL-2.1-or-later
# ckpt_backend: build fragment (included from Makefile.am).

# Pure cores: arena, region life cycle, eviction, peer balancing, manifest (no StarPU).
noinst_LTLIBRARIES += ckpt_backend/libhetpu_ckpt_core.la
ckpt_backend_libhetpu_ckpt_core_la_SOURCES = \
	ckpt_backend/core/arena.cpp ckpt_backend/core/arena.h \
	ckpt_backend/core/region_state.cpp ckpt_backend/core/region_state.h \
	ckpt_backend/core/eviction.cpp ckpt_backend/core/eviction.h \
	ckpt_backend/core/max_flow.h \
	ckpt_backend/core/ckpt_error.h \
	ckpt_backend/core/peer_schedule.cpp ckpt_backend/core/peer_schedule.h \
	ckpt_backend/core/device_cache.cpp ckpt_backend/core/device_cache.h \
	ckpt_backend/core/cache_shrink.cpp ckpt_backend/core/cache_shrink.h \
	ckpt_backend/core/cache_pressure.cpp ckpt_backend/core/cache_pressure.h \
	ckpt_backend/core/group_placement.cpp ckpt_backend/core/group_placement.h \
	ckpt_backend/core/durable_file.cpp ckpt_backend/core/durable_file.h \
	ckpt_backend/core/manifest.cpp ckpt_backend/core/manifest.h
ckpt_backend_libhetpu_ckpt_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(XXHASH_CFLAGS)
ckpt_backend_libhetpu_ckpt_core_la_LIBADD = $(XXHASH_LIBS)

check_PROGRAMS += tests/ckpt_unit_tests
tests_ckpt_unit_tests_SOURCES = \
	tests/unit/ckpt/arena_test.cpp \
	tests/unit/ckpt/region_state_test.cpp \
	tests/unit/ckpt/eviction_test.cpp \
	tests/unit/ckpt/peer_schedule_test.cpp \
	tests/unit/ckpt/peer_schedule_ratio_test.cpp \
	tests/unit/ckpt/device_cache_test.cpp \
	tests/unit/ckpt/cache_shrink_test.cpp \
	tests/unit/ckpt/cache_pressure_test.cpp \
	tests/unit/ckpt/manifest_test.cpp
tests_ckpt_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_ckpt_unit_tests_LDADD = ckpt_backend/libhetpu_ckpt_core.la $(GTEST_LIBS)
TESTS += tests/ckpt_unit_tests

# The tier engine (host arena, local and remote directories, flush/prefetch threads, TOML
# config). No StarPU either: tested directly.
noinst_LTLIBRARIES += ckpt_backend/libhetpu_ckpt_engine.la
ckpt_backend_libhetpu_ckpt_engine_la_SOURCES = \
	ckpt_backend/engine/config.cpp ckpt_backend/engine/config.h \
	ckpt_backend/engine/tier.h ckpt_backend/engine/work_queue.h \
	ckpt_backend/engine/memory_tier.cpp ckpt_backend/engine/memory_tier.h \
	ckpt_backend/engine/chain.cpp ckpt_backend/engine/chain.h \
	ckpt_backend/engine/device_tier.cpp ckpt_backend/engine/device_tier_io.cpp ckpt_backend/engine/device_tier.h \
	ckpt_backend/engine/device_memory.h \
	ckpt_backend/engine/host_tier.cpp ckpt_backend/engine/host_tier.h \
	ckpt_backend/engine/disk_tier.cpp ckpt_backend/engine/disk_tier.h \
	ckpt_backend/engine/engine.cpp ckpt_backend/engine/engine_restore.cpp ckpt_backend/engine/engine.h \
	ckpt_backend/engine/tier_list.cpp
ckpt_backend_libhetpu_ckpt_engine_la_CPPFLAGS = $(AM_CPPFLAGS) $(TOML_CFLAGS)
ckpt_backend_libhetpu_ckpt_engine_la_CXXFLAGS = $(AM_CXXFLAGS) -pthread
ckpt_backend_libhetpu_ckpt_engine_la_LIBADD = ckpt_backend/libhetpu_ckpt_core.la $(TOML_LIBS) -lpthread

# libhetpu_ckpt: the public C API (include/hetpu/ckpt.h) over StarPU.
lib_LTLIBRARIES += libhetpu_ckpt.la
# The device cache reserves its chunks with the node arbiter (node_arbiter/: its device
# keys, ledger and shared segment), the shared library libhetpu links too, so that
# libhetpu_ckpt needs no libhetpu and a process that loads both has one arbiter.
libhetpu_ckpt_la_SOURCES = ckpt_backend/starpu_ckpt.cpp ckpt_backend/starpu_disk_tier.cpp \
	ckpt_backend/starpu_device_memory.cpp ckpt_backend/starpu_device_memory.h \
	ckpt_backend/starpu_cache_arbiter.cpp ckpt_backend/starpu_cache_arbiter.h
libhetpu_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
libhetpu_ckpt_la_CXXFLAGS = $(AM_CXXFLAGS) -pthread
libhetpu_ckpt_la_LIBADD = ckpt_backend/libhetpu_ckpt_engine.la node_arbiter/libhetpu_node_arbiter.la \
	$(STARPU_LIBS) $(OPENCL_LIBS)
libhetpu_ckpt_la_LDFLAGS = -version-info 0:0:0 -no-undefined
if HETPU_CUDA
# The device cache tier calls the CUDA runtime directly (streams, peer copies).
libhetpu_ckpt_la_CPPFLAGS += $(CUDA_CFLAGS)
libhetpu_ckpt_la_LIBADD += $(CUDA_LIBS)
endif
hetpuinclude_HEADERS += include/hetpu/ckpt.h

check_PROGRAMS += tests/ckpt_engine_tests
tests_ckpt_engine_tests_SOURCES = \
	tests/unit/ckpt/config_test.cpp \
	tests/unit/ckpt/disk_tier_test.cpp \
	tests/unit/ckpt/engine_test.cpp \
	tests/unit/ckpt/engine_device_test.cpp \
	tests/unit/ckpt/tier_chain_test.cpp
tests_ckpt_engine_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS) -pthread
tests_ckpt_engine_tests_LDADD = ckpt_backend/libhetpu_ckpt_engine.la $(GTEST_LIBS)
TESTS += tests/ckpt_engine_tests

check_PROGRAMS += tests/ckpt_starpu_tests
tests_ckpt_starpu_tests_SOURCES = \
	tests/ckpt/ckpt_starpu_test.cpp \
	tests/integration/add_one_codelet.cpp tests/integration/add_one_codelet.h
tests_ckpt_starpu_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
tests_ckpt_starpu_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_ckpt_starpu_tests_LDADD = libhetpu_ckpt.la $(STARPU_LIBS) $(OPENCL_LIBS) $(GTEST_LIBS)
TESTS += tests/ckpt_starpu_tests

# The device cache tier on two OpenCL devices (PoCL), run by device_tier.sh.
check_PROGRAMS += tests/ckpt/ckpt_device_tests
tests_ckpt_ckpt_device_tests_SOURCES = \
	tests/ckpt/ckpt_device_test.cpp \
	tests/integration/add_one_codelet.cpp tests/integration/add_one_codelet.h
tests_ckpt_ckpt_device_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
tests_ckpt_ckpt_device_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_ckpt_ckpt_device_tests_LDADD = libhetpu_ckpt.la ckpt_backend/libhetpu_ckpt_core.la $(STARPU_LIBS) \
	$(OPENCL_LIBS) $(GTEST_LIBS)
TESTS += tests/ckpt/device_tier.sh
EXTRA_DIST += tests/ckpt/device_tier.sh

# The RTM-like workload with its blocks on two PoCL devices (bench/ckpt_rtm_device): device-path
# captures, every restored version checked, hinted restores served from the device cache.
TESTS += tests/ckpt/rtm_device.sh
EXTRA_DIST += tests/ckpt/rtm_device.sh

# The device cache beside MGB under device memory pressure (PoCL), run by device_pressure.sh.
check_PROGRAMS += tests/ckpt/ckpt_pressure_tests
tests_ckpt_ckpt_pressure_tests_SOURCES = \
	tests/ckpt/ckpt_pressure_test.cpp \
	tests/integration/add_one_codelet.cpp tests/integration/add_one_codelet.h
tests_ckpt_ckpt_pressure_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(OPENCL_CFLAGS)
tests_ckpt_ckpt_pressure_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_ckpt_ckpt_pressure_tests_LDADD = libhetpu_ckpt.la libhetpu.la node_arbiter/libhetpu_node_arbiter.la $(STARPU_LIBS) $(OPENCL_LIBS) $(GTEST_LIBS)
TESTS += tests/ckpt/device_pressure.sh
EXTRA_DIST += tests/ckpt/device_pressure.sh

# The device cache on real CUDA device memory (a CUDA build on a GPU machine; skips otherwise).
check_PROGRAMS += tests/ckpt/ckpt_cuda_tests
tests_ckpt_ckpt_cuda_tests_SOURCES = tests/ckpt/ckpt_cuda_test.cpp
tests_ckpt_ckpt_cuda_tests_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
tests_ckpt_ckpt_cuda_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_ckpt_ckpt_cuda_tests_LDADD = libhetpu_ckpt.la ckpt_backend/libhetpu_ckpt_core.la $(STARPU_LIBS) $(GTEST_LIBS)
if HETPU_CUDA
tests_ckpt_ckpt_cuda_tests_CPPFLAGS += $(CUDA_CFLAGS)
tests_ckpt_ckpt_cuda_tests_LDADD += $(CUDA_LIBS)
endif
TESTS += tests/ckpt/device_cuda.sh
EXTRA_DIST += tests/ckpt/device_cuda.sh

# Crash test: a writer killed with SIGKILL 30 times, verified after each kill.
check_PROGRAMS += tests/ckpt/crash_writer
tests_ckpt_crash_writer_SOURCES = tests/ckpt/crash_writer.cpp
tests_ckpt_crash_writer_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
tests_ckpt_crash_writer_LDADD = libhetpu_ckpt.la $(STARPU_LIBS)
TESTS += tests/ckpt/crash.sh tests/ckpt/crash_device.sh tests/ckpt/crash_remote.sh
EXTRA_DIST += tests/ckpt/crash.sh tests/ckpt/crash_device.sh tests/ckpt/crash_remote.sh
pkgconfig_DATA += hetpu-ckpt.pc
EXTRA_DIST += hetpu-ckpt.pc.in
