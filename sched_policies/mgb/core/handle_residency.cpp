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

void HandleResidency::hold(unsigned device, const std::vector<HandleUse> &handles)
{
    for (const HandleUse &h : distinct(handles))
        ++held_.at(device)[h.handle];
}

void HandleResidency::drop(unsigned device, const std::vector<HandleUse> &handles)
{
    auto &held = held_.at(device);
    for (const HandleUse &h : distinct(handles)) {
        auto it = held.find(h.handle);
        if (it != held.end() && --it->second == 0)
            held.erase(it);
    }
}

unsigned HandleResidency::holders(unsigned device, const void *handle) const
{
    const auto &held = held_.at(device);
    auto it = held.find(handle);
    return it == held.end() ? 0 : it->second;
}

}  // namespace hetpu::mgb
