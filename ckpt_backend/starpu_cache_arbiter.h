// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache's memory as the MGB node-wide arbiter sees it (docs/mgb.md): each cache
// chunk is a memory-only reservation of this process on its device (ledger_reserve_memory),
// so the MGB policies of this and every other process on the node place tasks beside the
// cache instead of on top of it; and what the arbiter's waiting tasks lack in memory is what
// the cache gives back. Off with HETPU_MGB_ARBITER=off; an arbiter that cannot be opened is said once
// on stderr and the cache runs without it (StarPU's own accounting still bounds it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace hetpu::mgb {
class NodeArbiter;
}

namespace hetpu::ckpt {

class CacheArbiter {
public:
    // One arbiter device per StarPU memory node in `nodes` (found by the MGB device key,
    // added to the ledger when no MGB process has yet). Null when the arbiter is off or
    // cannot be opened.
    static std::unique_ptr<CacheArbiter> open(const std::vector<unsigned> &nodes);
    ~CacheArbiter();

    // Reserves `bytes` on device `d` for `chunk`: false when the arbiter has no room there.
    bool reserve(std::size_t d, std::uintptr_t chunk, std::uint64_t bytes);
    void release(std::uintptr_t chunk);
    // Bytes of cache memory to give back on each device now: what ends the wait of each
    // process's oldest task waiting for memory (core/cache_pressure.h); zeros when the
    // node's waiting tasks wait for compute, or for more than this process holds.
    std::vector<std::uint64_t> memory_wanted();
    // This process's reservations on device d (tests, stats).
    std::uint64_t reserved(std::size_t d);
    std::string describe() const;

private:
    CacheArbiter() = default;
    std::unique_ptr<mgb::NodeArbiter> arbiter_;
    std::vector<int> ledger_device_;  // [d]: device index in the ledger, -1: none
    std::mutex mu_;
    std::map<std::uintptr_t, std::uint64_t> grants_;  // chunk -> grant id
};

}  // namespace hetpu::ckpt
