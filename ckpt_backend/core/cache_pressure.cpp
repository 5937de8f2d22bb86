// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/cache_pressure.h"

#include <algorithm>
#include <stdexcept>

namespace hetpu::ckpt {

std::vector<std::uint64_t> plan_pressure_release(const std::vector<std::vector<std::uint64_t>> &lack,
                                                 const std::vector<std::uint64_t> &cache_bytes)
{
    std::vector<std::uint64_t> give(cache_bytes.size(), 0);
    for (const std::vector<std::uint64_t> &waiter : lack) {
        std::size_t best = cache_bytes.size();
        for (std::size_t d = 0; d < std::min(waiter.size(), cache_bytes.size()); ++d) {
            const std::uint64_t need = waiter[d];
            if (need == 0 || need > cache_bytes[d])
                continue;  // no memory wait there, or more than this cache holds
            if (best == cache_bytes.size() || need < waiter[best])
                best = d;
        }
        if (best < cache_bytes.size())
            give[best] = std::max(give[best], waiter[best]);
    }
    return give;
}

RegrowBackoff::RegrowBackoff(double quiet_s, double max_quiet_s) : quiet_s_(quiet_s), max_quiet_s_(max_quiet_s)
{
    if (!(quiet_s >= 0) || !(max_quiet_s >= quiet_s))
        throw std::invalid_argument("regrow backoff: need 0 <= quiet <= max quiet");
}

void RegrowBackoff::pressure(double now)
{
    // A new round of pressure after the cache was allowed to grow again doubles the wait;
    // pressure during a wait only restarts it.
    if (!shrunk_ || now - last_pressure_ >= 2 * max_quiet_s_)
        wait_s_ = quiet_s_;  // the first round, or one long after the last: start over
    else if (now - last_pressure_ >= wait_s_)
        wait_s_ = std::min(wait_s_ * 2, max_quiet_s_);
    shrunk_ = true;
    last_pressure_ = now;
}

bool RegrowBackoff::may_grow(double now) const { return shrunk_ && quiet_s_ > 0 && now - last_pressure_ >= wait_s_; }

}  // namespace hetpu::ckpt
