# ckpt_backend: build fragment (included from Makefile.am).

# Pure cores: arena, region life cycle, eviction, peer balancing, manifest (no StarPU).
noinst_LTLIBRARIES += ckpt_backend/libhetpu_ckpt_core.la
ckpt_backend_libhetpu_ckpt_core_la_SOURCES = \
	ckpt_backend/core/arena.cpp ckpt_backend/core/arena.h \
	ckpt_backend/core/region_state.cpp ckpt_backend/core/region_state.h \
	ckpt_backend/core/eviction.cpp ckpt_backend/core/eviction.h \
	ckpt_backend/core/max_flow.h \
	ckpt_backend/core/peer_schedule.cpp ckpt_backend/core/peer_schedule.h \
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
	tests/unit/ckpt/manifest_test.cpp
tests_ckpt_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_ckpt_unit_tests_LDADD = ckpt_backend/libhetpu_ckpt_core.la $(GTEST_LIBS)
TESTS += tests/ckpt_unit_tests

