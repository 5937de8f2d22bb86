# SPDX-License-Identifier: LGPL-2.1-or-later
# perfmodels: energy sources (RAPL, NVML, model) in the pure core library; the online curve
# models (perfmodels/core) are listed with the policy cores in sched_policies/local.mk.
hetpu_core_sources += \
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
