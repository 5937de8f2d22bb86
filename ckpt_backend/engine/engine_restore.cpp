// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's read side (see engine.h): describing and restoring versions from the fastest
// tier that holds them, restore hints, and the newest restorable version.
#include "ckpt_backend/engine/engine.h"

#include <algorithm>
#include <cerrno>

namespace hetpu::ckpt {

std::vector<RegionSpec> Engine::describe(const std::string &name, std::int64_t version)
{
    std::lock_guard<std::mutex> lock(chain_.mu);
    Version *v = chain_.find_locked({name, version}, true);
    if (!v)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
    std::vector<RegionSpec> out;
    for (const RegionRecord &r : v->regions)
        out.push_back({r.region, r.size});
    return out;
}

void Engine::prefetch_hint(const std::string &name, const std::vector<std::int64_t> &order)
{
    check_name(name, "checkpoint name");
    {
        std::lock_guard<std::mutex> lock(chain_.mu);
        chain_.hints[name] = std::deque<std::int64_t>(order.begin(), order.end());
        // Versions that exist only on disk (an earlier run) are looked up once here, so the
        // prefetch threads never touch the disk under the lock for versions that do not
        // exist (yet): those appear through begin().
        for (std::int64_t v : order)
            chain_.find_locked({name, v}, true);
    }
    chain_.notify_state();
}

void Engine::restore(const std::string &name, std::int64_t version, std::size_t index, void *dst,
                     std::uint64_t dst_size)
{
    const Key key{name, version};
    const RegionKey rk{key, index};
    std::unique_lock<std::mutex> lock(chain_.mu);
    Version *v = chain_.find_locked(key, true);
    if (!v)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
    if (index >= v->regions.size())
        throw Error(-EINVAL,
                    "version has " + std::to_string(v->regions.size()) + " regions, no index " + std::to_string(index));
    const std::uint64_t size = v->regions[index].size;
    if (dst_size != size)
        throw Error(-EINVAL, "region '" + v->regions[index].region + "' holds " + std::to_string(size) +
                                 " bytes, the destination " + std::to_string(dst_size));
    const std::size_t durable = chain_.first_durable();
    for (bool done = false; !done;) {
        // The memory tiers, fastest first.
        for (std::size_t t = 0; t < durable && !done; ++t)
            if (chain_.tier(t).read_locked(lock, rk, dst)) {
                chain_.tier(t).count_restored_locked(rk, size);
                done = true;
            }
        if (done)
            break;
        v = chain_.find_locked(key, true);
        if (v->declared_in_memory && !v->error && v->deepest[index] < static_cast<int>(durable)) {
            chain_.wait_state(lock);  // still on its way down to the durable tiers
            continue;
        }
        // From the durable tiers: the region file is durable once the region left memory.
        const Manifest one = Chain::manifest_of(key, *v);
        const std::size_t first = v->first_complete(durable);
        lock.unlock();
        chain_.read_durable(first, one, index, dst);
        lock.lock();
        chain_.stats.restored_from_disk_bytes += size;
        done = true;
    }
    chain_.consume_hint_locked(key, index);
    lock.unlock();
    chain_.notify_state();
}

void Engine::restore_to_device(const std::string &name, std::int64_t version, std::size_t index,
                               const DeviceAddress &dst, std::uint64_t dst_size)
{
    DeviceTier *devices = find_tier<DeviceTier>();
    if (!devices)
        throw Error(-EINVAL, "restore_to_device: no device " + std::to_string(dst.device));
    devices->restore_to_device({name, version}, index, dst, dst_size,
                               [&](void *staging) { restore(name, version, index, staging, dst_size); });
}

std::int64_t Engine::latest(const std::string &name)
{
    std::int64_t best = -1;
    {
        std::lock_guard<std::mutex> lock(chain_.mu);
        for (const auto &[key, v] : chain_.versions)
            if (key.first == name && !v.error && v.reached[0] == v.regions.size() && v.declared_in_memory)
                best = std::max(best, key.second);
    }
    for (std::size_t t = 0; t < chain_.size(); ++t)
        if (auto newest = chain_.tier(t).newest_complete(name))
            best = std::max(best, *newest);
    if (best < 0)
        throw Error(-ENOENT, "no complete version of checkpoint '" + name + "' on any tier");
    return best;
}

}  // namespace hetpu::ckpt
