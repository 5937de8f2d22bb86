# SPDX-License-Identifier: LGPL-2.1-or-later
# perfmodels: the online time models (core/: curve fitting and selection, transfer model)
# and the energy sources (energy/: RAPL, NVML, model), all in the pure core library.
runtime_libhetpu_core_la_SOURCES += \
	perfmodels/core/curve_basis.cpp perfmodels/core/curve_basis.h \
	perfmodels/core/curve_fit.cpp perfmodels/core/curve_fit.h \
	perfmodels/core/curve_select.cpp perfmodels/core/curve_select.h \
	perfmodels/core/fitted_curve.cpp perfmodels/core/fitted_curve.h \
	perfmodels/core/observation_log.cpp perfmodels/core/observation_log.h \
	perfmodels/core/online_model.cpp perfmodels/core/online_model.h \
	perfmodels/core/transfer_model.cpp perfmodels/core/transfer_model.h
runtime_libhetpu_core_la_SOURCES += \
	perfmodels/energy/energy_source.cpp perfmodels/energy/energy_source.h \
	perfmodels/energy/counter_accumulator.cpp perfmodels/energy/counter_accumulator.h \
	perfmodels/energy/periodic_sampler.cpp perfmodels/energy/periodic_sampler.h \
	perfmodels/energy/rapl_source.cpp perfmodels/energy/rapl_source.h \
	perfmodels/energy/nvml_source.cpp perfmodels/energy/nvml_source.h \
	perfmodels/energy/model_source.cpp perfmodels/energy/model_source.h \
	perfmodels/energy/fake_source.cpp perfmodels/energy/fake_source.h

# A fake libnvidia-ml.so for the NVML source's tests (loaded with HETPU_NVML_LIBRARY).
check_LTLIBRARIES += tests/fakes/libfake_nvml.la
tests_fakes_libfake_nvml_la_SOURCES = tests/fakes/fake_nvml.c
tests_fakes_libfake_nvml_la_LDFLAGS = -module -avoid-version -rpath /nowhere -no-undefined

# Unit tests of the time models and the energy sources (no StarPU).
check_PROGRAMS += tests/perfmodels_unit_tests
tests_perfmodels_unit_tests_SOURCES = \
	tests/unit/perfmodels/curve_basis_test.cpp \
	tests/unit/perfmodels/curve_select_test.cpp \
	tests/unit/perfmodels/curve_online_model_test.cpp \
	tests/unit/perfmodels/curve_transfer_model_test.cpp \
	tests/unit/perfmodels/energy_source_test.cpp
tests_perfmodels_unit_tests_CXXFLAGS = $(AM_CXXFLAGS) $(GTEST_CFLAGS)
tests_perfmodels_unit_tests_LDADD = runtime/libhetpu_core.la $(GTEST_LIBS)
TESTS += tests/perfmodels_unit_tests
