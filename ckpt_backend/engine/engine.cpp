// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's construction and write side (see engine.h): building the tier list, declaring
// and capturing versions, waiting for them and draining the flushes.
#include "ckpt_backend/engine/engine.h"

#include <cerrno>

namespace hetpu::ckpt {

Engine::Engine(const EngineConfig &config, std::vector<std::unique_ptr<Tier>> tiers) : chain_(config, std::move(tiers))
{}

std::unique_ptr<Engine> Engine::create(const EngineConfig &config, std::unique_ptr<DeviceMemory> devices)
{
    return create_with_tiers(config, tiers_from_config(config, std::move(devices)));
}

std::unique_ptr<Engine> Engine::create_with_tiers(const EngineConfig &config, std::vector<std::unique_ptr<Tier>> tiers)
{
    std::unique_ptr<Engine> e(new Engine(config, std::move(tiers)));
    e->chain_.start();  // on an error, ~Engine stops what start() began
    return e;
}

Engine::~Engine()
{
    chain_.stop();  // the local tier's DiskTier releases the directory afterwards
}

std::uint64_t Engine::host_ready_bytes()
{
    const HostTier *host = find_tier<HostTier>();
    return host ? host->ready_bytes() : 0;
}

EngineStats Engine::stats()
{
    std::lock_guard<std::mutex> lock(chain_.mu);
    return chain_.stats;
}

void Engine::begin(const std::string &name, std::int64_t version, const std::vector<RegionSpec> &regions)
{
    check_name(name, "checkpoint name");
    if (version < 0)
        throw Error(-EINVAL, "checkpoint version must be >= 0");
    if (regions.empty())
        throw Error(-EINVAL, "checkpoint '" + name + "' has no regions (protect some data first)");
    for (const RegionSpec &r : regions)
        check_name(r.name, "region name");
    std::lock_guard<std::mutex> lock(chain_.mu);
    const Key key{name, version};
    auto it = chain_.versions.find(key);
    if (it != chain_.versions.end() && it->second.declared_in_memory)
        throw Error(-EEXIST, "checkpoint '" + name + "' version " + std::to_string(version) +
                                 " was already taken in this run (use a new version number)");
    if (it != chain_.versions.end() && it->second.copy_queued && !it->second.complete_on(chain_.size() - 1) &&
        !it->second.error)
        throw Error(-EBUSY, "checkpoint '" + name + "' version " + std::to_string(version) +
                                " of an earlier run is being copied to the " + chain_.tier(chain_.size() - 1).label() +
                                "; wait for it (hetpu_ckpt_wait REMOTE) or use a new version number");
    if (it != chain_.versions.end())
        for (std::size_t t = 0; t < chain_.size(); ++t)
            chain_.tier(t).forget_locked(key);  // what the tiers cached of the earlier run's copy
    Version v;
    v.checksums = chain_.config().checksums;
    v.flush_order = ++chain_.next_flush_order;
    for (std::size_t i = 0; i < regions.size(); ++i)
        v.regions.push_back({regions[i].name, regions[i].size, 0, region_file_name(name, version, i)});
    chain_.declare_locked(key, std::move(v));
}

void Engine::capture(const std::string &name, std::int64_t version, std::size_t index, const void *src)
{
    chain_.tier(0).accept({{name, version}, index}, src, nullptr);
}

void Engine::capture_from_devices(const std::string &name, std::int64_t version,
                                  const std::vector<DeviceSource> &sources)
{
    DeviceTier *devices = find_tier<DeviceTier>();
    if (!devices)
        throw Error(-EINVAL, "capture_from_devices: no device tier is configured ([device] size)");
    devices->capture_from_devices({name, version}, sources);
}

std::size_t Engine::device_free_slots(std::size_t device)
{
    DeviceTier *devices = find_tier<DeviceTier>();
    return devices ? devices->free_slots(device) : 0;
}

void Engine::wait_device_caches_ready()
{
    if (DeviceTier *devices = find_tier<DeviceTier>())
        devices->wait_caches_ready();
}

std::uint64_t Engine::shrink_device(std::size_t device, std::size_t chunks)
{
    DeviceTier *devices = find_tier<DeviceTier>();
    return devices ? devices->shrink(device, chunks) : 0;
}

void Engine::wait(const std::string &name, std::int64_t version, Tier::Level level)
{
    const std::size_t t = chain_.position_of(level);
    if (t == chain_.size())
        throw Error(-EINVAL, level == Tier::Remote ? "no remote tier configured ([remote] path)"
                                                   : "no tier to wait for at that level (configure [local] path)");
    const Tier &tier = chain_.tier(t);
    const Key key{name, version};
    std::unique_lock<std::mutex> lock(chain_.mu);
    for (;;) {
        Version *v = chain_.find_locked(key, true);
        if (!v)
            throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
        if (v->error)
            throw Error(v->error, v->error_message);
        if (tier.durable() ? v->complete_on(t) : v->reached[t] == v->regions.size())
            return;
        chain_.wait_state(lock);
    }
}

void Engine::drain()
{
    std::unique_lock<std::mutex> lock(chain_.mu);
    while (!chain_.idle_locked())
        chain_.wait_state(lock);
    if (chain_.first_error)
        throw Error(chain_.first_error, chain_.first_error_message);
}

}  // namespace hetpu::ckpt
