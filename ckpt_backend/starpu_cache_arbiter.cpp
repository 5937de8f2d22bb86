// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/starpu_cache_arbiter.h"

#include "ckpt_backend/core/cache_pressure.h"
#include "node_arbiter/node_arbiter.h"
#include "node_arbiter/device_discovery.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace hetpu::ckpt {

std::unique_ptr<CacheArbiter> CacheArbiter::open(const std::vector<unsigned> &nodes)
{
    if (mgb::NodeArbiter::disabled_by_environment())
        return nullptr;
    const std::string name = mgb::NodeArbiter::default_name();
    std::unique_ptr<CacheArbiter> a(new CacheArbiter);
    try {
        a->arbiter_ = mgb::NodeArbiter::open_unregistered(name);
    } catch (const std::runtime_error &e) {
        std::fprintf(stderr,
                     "hetpu_ckpt: the device cache is not reserved with the MGB arbiter %s (%s); MGB policies "
                     "will not see it (HETPU_MGB_ARBITER=off silences this)\n",
                     name.c_str(), e.what());
        return nullptr;
    }
    // The MGB scheduler's own device keys and specs, so that both name the same device.
    const std::vector<mgb::AcceleratorDevice> devices = mgb::discover_accelerators(0);
    a->ledger_device_.assign(nodes.size(), -1);
    a->arbiter_->with_ledger([&](mgb::Ledger &ledger) {
        for (std::size_t d = 0; d < nodes.size(); ++d)
            for (const mgb::AcceleratorDevice &dev : devices)
                if (dev.memory_node == nodes[d] && dev.spec.memory_bytes > 0)
                    a->ledger_device_[d] = mgb::ledger_add_device(ledger, dev.key, dev.spec);
    });
    return a;
}

CacheArbiter::~CacheArbiter()
{
    // Chunks still reserved (the engine releases all of them first; this is the safety net).
    std::lock_guard<std::mutex> lock(mu_);
    if (!grants_.empty())
        arbiter_->with_ledger([&](mgb::Ledger &ledger) {
            for (const auto &[chunk, grant] : grants_)
                mgb::ledger_release(ledger, grant);
        });
}

bool CacheArbiter::reserve(std::size_t d, std::uintptr_t chunk, std::uint64_t bytes)
{
    if (d >= ledger_device_.size() || ledger_device_[d] < 0)
        return true;  // a device the arbiter does not know: StarPU's accounting alone
    std::uint64_t grant = 0;
    bool ran = false;
    arbiter_->with_ledger([&](mgb::Ledger &ledger) {
        ran = true;
        grant = mgb::ledger_reserve_memory(ledger, static_cast<unsigned>(ledger_device_[d]),
                                           static_cast<std::int32_t>(getpid()), bytes);
    });
    if (!ran)
        return true;  // the lock could not be taken (logged): do not block the cache on it
    if (grant == 0)
        return false;
    std::lock_guard<std::mutex> lock(mu_);
    grants_[chunk] = grant;
    return true;
}

void CacheArbiter::release(std::uintptr_t chunk)
{
    std::uint64_t grant = 0;
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = grants_.find(chunk);
        if (it == grants_.end())
            return;
        grant = it->second;
        grants_.erase(it);
    }
    arbiter_->with_ledger([&](mgb::Ledger &ledger) { mgb::ledger_release(ledger, grant); });
}

std::vector<std::uint64_t> CacheArbiter::memory_wanted()
{
    const std::size_t n = ledger_device_.size();
    const auto pid = static_cast<std::int32_t>(getpid());
    std::vector<std::vector<std::uint64_t>> lack;
    std::vector<std::uint64_t> mine(n, 0);
    arbiter_->with_ledger([&](mgb::Ledger &ledger) {
        for (const mgb::Grant &g : ledger.grants)
            if (g.id && g.pid == pid && g.algorithm == mgb::kMemoryOnly)
                for (std::size_t d = 0; d < n; ++d)
                    if (ledger_device_[d] == g.device)
                        mine[d] += g.bytes;
        for (const mgb::ProcessEntry &p : ledger.processes) {
            if (p.pid <= 0 || p.waiting == 0)
                continue;
            std::vector<std::uint64_t> row(n, 0);
            bool any = false;
            for (std::size_t d = 0; d < n; ++d) {
                const int l = ledger_device_[d];
                if (l < 0 || p.memory_wait_bytes[l] == 0)
                    continue;
                row[d] = mgb::ledger_memory_lack(ledger, p.pid, static_cast<unsigned>(l), p.memory_wait_bytes[l], pid);
                any = any || row[d] != 0;
            }
            if (any)
                lack.push_back(std::move(row));
        }
    });
    return plan_pressure_release(lack, mine);
}

std::uint64_t CacheArbiter::reserved(std::size_t d)
{
    std::uint64_t bytes = 0;
    if (d >= ledger_device_.size() || ledger_device_[d] < 0)
        return 0;
    const auto pid = static_cast<std::int32_t>(getpid());
    arbiter_->with_ledger([&](mgb::Ledger &ledger) {
        for (const mgb::Grant &g : ledger.grants)
            if (g.id && g.pid == pid && g.algorithm == mgb::kMemoryOnly && g.device == ledger_device_[d])
                bytes += g.bytes;
    });
    return bytes;
}

std::string CacheArbiter::describe() const { return arbiter_->describe(); }

}  // namespace hetpu::ckpt
