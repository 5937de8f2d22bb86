// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/heat/heat_checkpoint.h"

#include "apps/common/app_checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hetpu::heat {

namespace {

constexpr const char *kName = "heat";

}  // namespace

std::string checkpoint_config(const std::string &dir, std::size_t version_bytes, std::size_t device_bytes)
{
    // Four versions in the host cache: the one flushing, the one arriving from the devices,
    // and room for the checksummed header regions' rounding.
    const std::size_t host = std::max<std::size_t>(std::size_t{1} << 20, 4 * (version_bytes + (64 << 10)));
    std::string toml = "versions_to_keep = 2\n[host]\nsize = " + std::to_string(host) +
                       "\n[local]\npath = " + apps::toml_string(dir) + "\n";
    if (device_bytes > 0) {
        // One chunk holds a version of the device's blocks; two chunks: a version is
        // captured while the previous one is still being flushed.
        const std::size_t chunk = (device_bytes + kCheckpointSlot - 1) / kCheckpointSlot * kCheckpointSlot;
        toml += "[device]\nsize = " + std::to_string(2 * chunk) + "\nchunk = " + std::to_string(chunk) +
                "\nslot = " + std::to_string(kCheckpointSlot) + "\n";
    }
    return toml;
}

HeatCheckpoints::~HeatCheckpoints()
{
    if (started_)
        hetpu_ckpt_finalize();
}

int HeatCheckpoints::backend_error(const std::string &what, int rc)
{
    return apps::checkpoint_backend_error("heat", what, rc);
}

int HeatCheckpoints::start(std::size_t version_bytes, std::size_t device_bytes)
{
    const std::string &dir = options_.checkpoint_dir;
    if (apps::prepare_checkpoint_dir("heat", dir, options_.restart) != 0)
        return 1;
    const std::string toml = checkpoint_config(dir, version_bytes, device_bytes);
    if (int rc = hetpu_ckpt_init_from_string(toml.c_str()); rc != 0)
        return backend_error("starting the backend on '" + dir + "'", rc);
    started_ = true;
    device_tier_ = device_bytes > 0;
    if (int rc = hetpu_ckpt_protect_buffer("header", &header_, sizeof header_); rc != 0)
        return backend_error("protecting the header", rc);
    // The chunks are allocated by a background thread; a device that refuses one ends the
    // growth too (its checkpoints then spill to the host tier, which the counters show).
    for (hetpu_ckpt_stats s{}; device_tier_; ::usleep(1000)) {
        if (int rc = hetpu_ckpt_get_stats(&s); rc != 0)
            return backend_error("reading the counters", rc);
        if (!s.device_caches_growing)
            break;
    }
    if (options_.restart)
        return 0;
    return apps::refuse_earlier_checkpoints("heat", kName, dir, "sweep");
}

int HeatCheckpoints::protect(const std::vector<starpu_data_handle_t> &blocks)
{
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        regions_.push_back("block" + std::to_string(b));
        if (int rc = hetpu_ckpt_protect(regions_.back().c_str(), blocks[b]); rc != 0)
            return backend_error("protecting " + regions_.back(), rc);
    }
    return 0;
}

int HeatCheckpoints::restore(const std::vector<starpu_data_handle_t> &blocks, uint64_t &iteration)
{
    const std::string &dir = options_.checkpoint_dir;
    int64_t version = 0;
    if (apps::newest_checkpoint("heat", kName, dir, version) != 0)
        return 1;
    const std::string what = "restoring sweep " + std::to_string(version) + " from '" + dir + "'";
    // The header alone first, the blocks protected only once it matches: a checkpoint of
    // another grid is refused with the option that differs, not with a region mismatch.
    if (int rc = hetpu_ckpt_restore(kName, version); rc != 0)
        return backend_error(what, rc);
    std::string error;
    if (!check_header(header_, options_, static_cast<uint64_t>(version), error)) {
        std::fprintf(stderr, "heat: --restart from '%s': %s\n", dir.c_str(), error.c_str());
        return 1;
    }
    if (static_cast<uint64_t>(version) > options_.iterations) {
        std::fprintf(stderr,
                     "heat: --restart from '%s': the newest checkpoint is sweep %lld, past --iterations %llu: give "
                     "--iterations %lld or more\n",
                     dir.c_str(), static_cast<long long>(version), static_cast<unsigned long long>(options_.iterations),
                     static_cast<long long>(version));
        return 1;
    }
    if (protect(blocks) != 0)
        return 1;
    if (int rc = hetpu_ckpt_restore(kName, version); rc != 0)
        return backend_error(what, rc);
    iteration = static_cast<uint64_t>(version);
    return 0;
}

int HeatCheckpoints::take(uint64_t iteration)
{
    if (last_ >= 0) {
        if (int rc = hetpu_ckpt_wait(kName, last_, HETPU_CKPT_TIER_LOCAL); rc != 0)
            return backend_error("writing sweep " + std::to_string(last_) + " to the directory", rc);
    }
    header_ = header_of(options_, iteration);
    if (int rc = hetpu_ckpt_checkpoint(kName, static_cast<int64_t>(iteration)); rc != 0)
        return backend_error("checkpoint of sweep " + std::to_string(iteration), rc);
    last_ = static_cast<int64_t>(iteration);
    ++taken_;
    return 0;
}

int HeatCheckpoints::finish(hetpu_ckpt_stats &stats)
{
    if (!started_)
        return 0;
    int status = 0;
    if (int rc = last_ >= 0 ? hetpu_ckpt_wait(kName, last_, HETPU_CKPT_TIER_LOCAL) : 0; rc != 0)
        status = backend_error("writing sweep " + std::to_string(last_) + " to the directory", rc);
    if (int rc = hetpu_ckpt_get_stats(&stats); rc != 0)
        status = backend_error("reading the counters", rc);
    for (const std::string &r : regions_)
        hetpu_ckpt_unprotect(r.c_str());
    started_ = false;
    if (int rc = hetpu_ckpt_finalize(); rc != 0)
        status = backend_error("writing the last checkpoints to '" + options_.checkpoint_dir + "'", rc);
    return status;
}

}  // namespace hetpu::heat
