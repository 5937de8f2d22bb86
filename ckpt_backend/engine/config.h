// SPDX-License-Identifier: LGPL-2.1-or-later
// Checkpoint backend configuration, read from TOML (key names follow VELOC's where the
// concept is the same: scratch = node-local directory, persistent = remote/PFS directory,
// max_versions, chksum -> checksums):
//
//   versions_to_keep = 0        # complete versions kept per name on each disk tier, 0 = all
//   checksums = true            # xxHash per region, verified on restore
//   flush_threads = 1           # threads per tier boundary (host->local, local->remote)
//   eviction = "score"          # "score" (restore-hint look-ahead) or "fifo"
//   prefetch = true             # read hinted versions back ahead of their restore
//   [host]
//   size = "256MiB"             # host cache arena (0 = no host tier: synchronous writes)
//   incremental_init = true     # map and touch in the background, use what is ready
//   [local]                     # node-local disk tier (required)
//   path = "/tmp/ckpt/scratch"
//   capacity = "0"              # simulated capacity, 0 = the file system's
//   drop_page_cache = false     # after fsync, so reads really hit the device
//   [remote]                    # remote / parallel file system tier (optional)
//   path = "/pfs/ckpt"
//   bandwidth = "0"             # simulated write bandwidth in bytes/s, 0 = the file system's
//                               # (a slow parallel file system in tests and benchmarks)
//   [device]                    # device cache tier, one per accelerator memory node (optional)
//   size = "64MiB"              # per device, or "25%" of the device's memory; 0 = no tier
//   chunk = "16MiB"             # allocated one at a time while the application runs
//   slot = "256KiB"             # allocation unit of the device cache and of peer balancing
//   peer_schedule = "flow"      # remainders of full devices: "flow" | "greedy" | "local"
//   headroom = "16MiB"          # device memory the cache leaves free for the application
//                               # (default: one chunk); below it, the cache gives chunks back
//   regrow_after = 1.0          # seconds without pressure before a cache that gave memory
//                               # back grows again (doubling after each new round, up to
//                               # 64x); 0: never grows again
//
// Sizes are integers (bytes) or strings with a unit: B, KiB, MiB, GiB (or K, M, G).
//
// A tier beyond these four has its own [table], named in tier_tables() (tier_list.cpp): its
// keys reach the tier as written (EngineConfig::tier_settings), and the tier checks them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ckpt_backend/core/ckpt_error.h"
#include "ckpt_backend/core/group_placement.h"

namespace hetpu::ckpt {

enum class EvictionPolicy { Fifo, Score };

struct DeviceTierConfig {
    std::uint64_t bytes = 0;  // per device; 0 with fraction 0: no device tier
    double fraction = 0;      // of each device's memory, when > 0 (replaces bytes)
    std::uint64_t chunk_bytes = 16ull << 20;
    std::uint64_t slot_bytes = 256ull << 10;
    PeerPolicy peer_policy = PeerPolicy::Flow;
    // Free device memory (StarPU's accounting) the cache never takes and, when the
    // application's data eats into it, gives back by whole chunks. Parsing sets it to the
    // chunk size unless [device] headroom says otherwise.
    std::uint64_t headroom_bytes = 16ull << 20;
    // Quiet seconds before a cache that gave memory back grows again (0: never); doubled
    // after each new round of pressure, up to 64 times this (core/cache_pressure.h).
    double regrow_after_s = 1.0;
    bool enabled() const { return bytes > 0 || fraction > 0; }
};

// One key of a tier's own table: its value as TOML wrote it (a string without its quotes),
// and where, for the tier's messages ("ckpt.toml:12").
struct TierSetting {
    std::string text;
    bool is_string = false;
    std::string where;
};
using TierSettings = std::map<std::string, TierSetting>;

// The tables of tiers other than host, local, remote and device (tier_list.cpp): a table with
// one of these names is handed to its tier; any other unknown table is an error.
const std::vector<std::string> &tier_tables();

struct EngineConfig {
    int versions_to_keep = 0;
    bool checksums = true;
    int flush_threads = 1;
    EvictionPolicy eviction = EvictionPolicy::Score;
    bool prefetch = true;
    std::uint64_t host_bytes = 64ull << 20;
    bool host_incremental_init = true;
    std::string local_dir;
    std::uint64_t local_capacity = 0;
    bool drop_page_cache = false;
    std::string remote_dir;
    std::uint64_t remote_capacity = 0;
    std::uint64_t remote_bandwidth = 0;  // bytes/s, 0: unthrottled
    DeviceTierConfig device;
    std::map<std::string, TierSettings> tier_settings;  // by table name, for the tiers of tier_tables()
};

// Parses a size: "64MiB", "1G", "4096". Throws an -EINVAL Error saying why when malformed.
std::uint64_t parse_size(const std::string &text);
// Parses TOML text; `origin` names the file in messages. Throws an -EINVAL Error naming the
// key, the line, and how to fix it. `tables`: the tier tables it accepts (tier_tables()).
EngineConfig parse_config(const std::string &toml_text, const std::string &origin,
                          const std::vector<std::string> &tables = tier_tables());
// Throws an Error with the errno of the failed read, or as parse_config.
EngineConfig load_config_file(const std::string &path);

}  // namespace hetpu::ckpt
