// SPDX-License-Identifier: LGPL-2.1-or-later
// The tier list a configuration describes, fastest first: the only place that knows which
// tiers exist. The engine chains whatever this returns (engine.h, tier.h).
#include "ckpt_backend/engine/engine.h"

#include "ckpt_backend/engine/device_tier.h"
#include "ckpt_backend/engine/disk_tier.h"
#include "ckpt_backend/engine/host_tier.h"

namespace hetpu::ckpt {

// Tables of tiers beyond the four built in, whose settings config.cpp reads itself: a new
// tier with settings adds its table's name here and reads config.tier_settings[name].
const std::vector<std::string> &tier_tables()
{
    static const std::vector<std::string> names;
    return names;
}

std::vector<std::unique_ptr<Tier>> Engine::tiers_from_config(const EngineConfig &config,
                                                             std::unique_ptr<DeviceMemory> devices)
{
    std::vector<std::unique_ptr<Tier>> tiers;
    if (config.device.enabled() && devices && devices->device_count() > 0)
        tiers.push_back(std::make_unique<DeviceTier>(std::move(devices), config.device));
    tiers.push_back(std::make_unique<HostTier>(config.host_bytes, config.host_incremental_init));
    WriteOptions local;
    local.drop_page_cache = config.drop_page_cache;
    local.simulated_capacity = config.local_capacity;
    tiers.push_back(std::make_unique<DiskTier>("local tier", config.local_dir, local, 0, Tier::Local));
    if (!config.remote_dir.empty()) {
        WriteOptions remote;
        remote.drop_page_cache = config.drop_page_cache;
        remote.simulated_capacity = config.remote_capacity;
        tiers.push_back(std::make_unique<DiskTier>("remote tier", config.remote_dir, remote, config.remote_bandwidth,
                                                   Tier::Remote));
    }
    return tiers;
}

}  // namespace hetpu::ckpt
