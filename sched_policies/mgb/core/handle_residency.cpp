// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/mgb/core/handle_residency.h"

#include <algorithm>

namespace hetpu::mgb {

std::vector<HandleUse> HandleResidency::distinct(const std::vector<HandleUse> &handles)
{
    std::vector<HandleUse> out;
    out.reserve(handles.size());
    for (const HandleUse &h : handles)  // tasks name a few handles: quadratic is cheapest
        if (std::none_of(out.begin(), out.end(), [&](const HandleUse &o) { return o.handle == h.handle; }))
            out.push_back(h);
    return out;
}

uint64_t HandleResidency::new_bytes(unsigned device, const std::vector<HandleUse> &handles) const
{
    uint64_t bytes = 0;
    for (const HandleUse &h : distinct(handles))
        if (holders(device, h.handle) == 0)
            bytes += h.bytes;
    return bytes;
}

void HandleResidency::hold(unsigned device, uint64_t grant, const std::vector<HandleUse> &handles)
{
    for (const HandleUse &h : distinct(handles)) {
        Held &held = held_.at(device)[h.handle];
        if (held.grants.empty())
            held.payer = grant;
        held.grants.push_back(grant);
    }
}

std::vector<HandleTransfer> HandleResidency::drop(unsigned device, uint64_t grant,
                                                  const std::vector<HandleUse> &handles)
{
    std::vector<HandleTransfer> transfers;
    auto &on_device = held_.at(device);
    for (const HandleUse &h : distinct(handles)) {
        auto it = on_device.find(h.handle);
        if (it == on_device.end())
            continue;
        Held &held = it->second;
        auto mine = std::find(held.grants.begin(), held.grants.end(), grant);
        if (mine == held.grants.end())
            continue;
        held.grants.erase(mine);
        if (held.grants.empty()) {
            on_device.erase(it);
            continue;
        }
        if (held.payer == grant) {
            held.payer = held.grants.front();
            transfers.push_back(HandleTransfer{held.payer, h.bytes});
        }
    }
    return transfers;
}

unsigned HandleResidency::holders(unsigned device, const void *handle) const
{
    const auto &held = held_.at(device);
    auto it = held.find(handle);
    return it == held.end() ? 0 : unsigned(it->second.grants.size());
}

uint64_t HandleResidency::payer(unsigned device, const void *handle) const
{
    const auto &held = held_.at(device);
    auto it = held.find(handle);
    return it == held.end() ? 0 : it->second.payer;
}

}  // namespace hetpu::mgb
