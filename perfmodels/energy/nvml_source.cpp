// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/energy/nvml_source.h"

#include <dlfcn.h>

#include <cmath>
#include <stdexcept>

namespace hetpu::energy {

// The few NVML entry points used, declared here with NVML's C types so no NVML header is
// needed at build time. nvmlReturn_t is an int enum; 0 is NVML_SUCCESS.
struct NvmlSource::Api {
    using Ret = int;
    Ret (*init)() = nullptr;
    Ret (*shutdown)() = nullptr;
    Ret (*count)(unsigned *) = nullptr;
    Ret (*handle_by_index)(unsigned, void **) = nullptr;
    Ret (*total_energy)(void *, unsigned long long *) = nullptr;
    Ret (*power_usage)(void *, unsigned *) = nullptr;
    const char *(*error_string)(Ret) = nullptr;

    std::string describe(Ret r) const { return error_string ? error_string(r) : "NVML error " + std::to_string(r); }
};

namespace {

template <typename F> bool bind(void *lib, const char *sym, F *out)
{
    *out = reinterpret_cast<F>(dlsym(lib, sym));
    return *out != nullptr;
}

}  // namespace

std::unique_ptr<NvmlSource> NvmlSource::open(const std::string &library, std::chrono::milliseconds power_period)
{
    // After src exists, its destructor shuts NVML down and closes the library on the way out.
    auto fail = [](const std::string &msg) -> std::unique_ptr<NvmlSource> { throw std::runtime_error("nvml: " + msg); };
    void *lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return fail("cannot load " + library + " (no NVIDIA driver on this machine?): " + dlerror());
    std::unique_ptr<NvmlSource> src(new NvmlSource());
    src->lib_ = lib;  // the destructor closes it from here on
    src->api_ = std::make_unique<Api>();
    Api &a = *src->api_;
    bind(lib, "nvmlErrorString", &a.error_string);
    if (!bind(lib, "nvmlInit_v2", &a.init) || !bind(lib, "nvmlShutdown", &a.shutdown) ||
        !bind(lib, "nvmlDeviceGetCount_v2", &a.count) ||
        !bind(lib, "nvmlDeviceGetHandleByIndex_v2", &a.handle_by_index) ||
        !bind(lib, "nvmlDeviceGetPowerUsage", &a.power_usage))
        return fail(library + " lacks the NVML entry points hetpu needs (driver too old?)");
    bind(lib, "nvmlDeviceGetTotalEnergyConsumption", &a.total_energy);
    if (Api::Ret r = a.init(); r != 0) {
        a.shutdown = nullptr;  // never initialised: nothing to shut down
        return fail("nvmlInit failed: " + a.describe(r));
    }
    unsigned n = 0;
    if (Api::Ret r = a.count(&n); r != 0)
        return fail("nvmlDeviceGetCount failed: " + a.describe(r));
    if (n == 0)
        return fail("NVML sees no GPU");
    const auto now = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < n; ++i) {
        Gpu g;
        if (Api::Ret r = a.handle_by_index(i, &g.handle); r != 0)
            return fail("nvmlDeviceGetHandleByIndex(" + std::to_string(i) + ") failed: " + a.describe(r));
        g.has_counter = a.total_energy && a.total_energy(g.handle, &g.first_mj) == 0;
        unsigned mw = 0;
        if (!g.has_counter && a.power_usage(g.handle, &mw) != 0)
            return fail("GPU " + std::to_string(i) + " reports neither energy nor power");
        g.last_w = mw * 1e-3;
        g.last_t = now;
        src->gpus_.push_back(g);
    }
    src->opened_ = now;
    if (src->integrated_count() > 0) {
        NvmlSource *self = src.get();
        src->sampler_ = std::make_unique<PeriodicSampler>(power_period, [self] { self->sample_power(); });
    }
    return src;
}

NvmlSource::~NvmlSource()
{
    sampler_.reset();
    if (api_ && api_->shutdown)
        api_->shutdown();
    if (lib_)
        dlclose(lib_);
}

int NvmlSource::integrated_count() const
{
    int n = 0;
    for (const Gpu &g : gpus_)
        n += g.has_counter ? 0 : 1;
    return n;
}

void NvmlSource::sample_power()
{
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (Gpu &g : gpus_) {
        if (g.has_counter)
            continue;
        unsigned mw = 0;
        if (api_->power_usage(g.handle, &mw) != 0)
            continue;
        const double w = mw * 1e-3;
        const double dt = std::chrono::duration<double>(now - g.last_t).count();
        g.integrated_j += 0.5 * (w + g.last_w) * dt;  // trapezoid between samples
        g.last_w = w;
        g.last_t = now;
    }
}

double NvmlSource::joules(Device d)
{
    if (d != Device::gpu)
        return 0;
    double j = 0;
    for (double g : gpu_joules())
        j += g;
    return j;
}

std::vector<double> NvmlSource::gpu_joules()
{
    if (sampler_)
        sample_power();
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<double> out;
    out.reserve(gpus_.size());
    for (Gpu &g : gpus_) {
        double j = 0;
        unsigned long long mj = 0;
        if (!g.has_counter)
            j = g.integrated_j;
        else if (api_->total_energy(g.handle, &mj) == 0 && mj >= g.first_mj)
            j = static_cast<double>(mj - g.first_mj) * 1e-3;
        out.push_back(j);
    }
    return out;
}

double NvmlSource::gpu_counter_j(int index)
{
    std::lock_guard<std::mutex> lock(mutex_);
    unsigned long long mj = 0;
    if (index < 0 || size_t(index) >= gpus_.size() || !gpus_[size_t(index)].has_counter ||
        api_->total_energy(gpus_[size_t(index)].handle, &mj) != 0)
        return std::nan("");
    return static_cast<double>(mj) * 1e-3;
}

double NvmlSource::seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count();
}

}  // namespace hetpu::energy
