// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/energy/rapl_source.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <dirent.h>
#include <fstream>
#include <algorithm>

namespace hetpu::energy {

namespace {

bool read_u64(const std::string &path, std::uint64_t *out, int *err)
{
    errno = 0;
    std::ifstream in(path);
    if (!in) {
        *err = errno ? errno : EIO;
        return false;
    }
    unsigned long long v = 0;
    if (!(in >> v)) {
        // sysfs refuses the read itself (not the open) when the file is root-only.
        *err = errno ? errno : EIO;
        return false;
    }
    *out = v;
    return true;
}

std::string read_line(const std::string &path)
{
    std::ifstream in(path);
    std::string s;
    std::getline(in, s);
    return s;
}

std::vector<std::string> list_dir(const std::string &dir)
{
    std::vector<std::string> names;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            names.emplace_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Package zones are "intel-rapl:N" (AMD's are exposed under the same driver name);
// subzones "intel-rapl:N:M" hold core, uncore and dram.
bool is_package_zone(const std::string &n)
{
    return n.rfind("intel-rapl:", 0) == 0 && std::count(n.begin(), n.end(), ':') == 1;
}

}  // namespace

std::unique_ptr<RaplSource> RaplSource::open(const std::string &root, std::chrono::milliseconds period)
{
    std::unique_ptr<RaplSource> src(new RaplSource());
    std::string failure;
    for (const std::string &pkg : list_dir(root)) {
        if (!is_package_zone(pkg))
            continue;
        std::vector<std::string> dirs = {root + "/" + pkg};
        for (const std::string &sub : list_dir(root + "/" + pkg))
            if (sub.rfind(pkg + ":", 0) == 0 && read_line(root + "/" + pkg + "/" + sub + "/name") == "dram")
                dirs.push_back(root + "/" + pkg + "/" + sub);
        for (const std::string &dir : dirs) {
            std::uint64_t raw = 0, range = 0;
            int err = 0;
            if (!read_u64(dir + "/energy_uj", &raw, &err)) {
                failure = dir + "/energy_uj: " + std::strerror(err) +
                          (err == EACCES ? " (recent kernels make RAPL counters root-only; an administrator can "
                                           "grant read access, or set HETPU_ENERGY=model)"
                                         : "");
                continue;
            }
            int ignored = 0;
            read_u64(dir + "/max_energy_range_uj", &range, &ignored);
            Zone z{read_line(dir + "/name"), dir + "/energy_uj", CounterAccumulator(range)};
            z.counter.feed(raw);
            src->zones_.push_back(std::move(z));
        }
    }
    if (src->zones_.empty())
        throw std::runtime_error(failure.empty() ? "rapl: no powercap package zone under " + root +
                                                       " (no RAPL on this CPU, "
                                                       "or the intel_rapl driver is not loaded)"
                                                 : "rapl: " + failure);
    src->opened_ = std::chrono::steady_clock::now();
    RaplSource *self = src.get();
    src->sampler_ = std::make_unique<PeriodicSampler>(period, [self] { self->sample_all(); });
    return src;
}

RaplSource::~RaplSource()
{
    sampler_.reset();  // stop the thread before the zones it reads go away
}

void RaplSource::sample_all()
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (Zone &z : zones_) {
        std::uint64_t raw = 0;
        int err = 0;
        if (read_u64(z.energy_path, &raw, &err))
            z.counter.feed(raw);
    }
}

double RaplSource::joules(Device d)
{
    if (d != Device::cpu)
        return 0;
    sample_all();
    std::lock_guard<std::mutex> lock(mutex_);
    std::uint64_t uj = 0;
    for (const Zone &z : zones_)
        uj += z.counter.total();
    return static_cast<double>(uj) * 1e-6;
}

double RaplSource::seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count();
}

std::vector<std::string> RaplSource::zones() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    for (const Zone &z : zones_)
        names.push_back(z.name);
    return names;
}

}  // namespace hetpu::energy
