// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/region_state.h"

namespace hetpu::ckpt {

const char *to_string(RegionState s)
{
    switch (s) {
    case RegionState::Writing: return "writing";
    case RegionState::Cached: return "cached";
    case RegionState::Flushed: return "flushed";
    case RegionState::Prefetching: return "prefetching";
    case RegionState::Ready: return "ready";
    case RegionState::Consumed: return "consumed";
    case RegionState::Evictable: return "evictable";
    }
    return "?";
}

bool is_legal_transition(RegionState from, RegionState to)
{
    using S = RegionState;
    switch (from) {
    case S::Writing: return to == S::Cached;
    case S::Cached: return to == S::Flushed;
    case S::Flushed: return to == S::Ready || to == S::Evictable;
    case S::Prefetching: return to == S::Ready;
    case S::Ready: return to == S::Consumed || to == S::Evictable;
    case S::Consumed: return to == S::Ready || to == S::Evictable;
    case S::Evictable: return false;  // terminal: the bytes are being released
    }
    return false;
}

bool may_evict(RegionState s)
{
    return s == RegionState::Flushed || s == RegionState::Ready || s == RegionState::Consumed;
}

bool is_readable(RegionState s)
{
    return s == RegionState::Cached || s == RegionState::Flushed || s == RegionState::Ready ||
           s == RegionState::Consumed;
}

IllegalTransition::IllegalTransition(RegionState from, RegionState to)
    : std::logic_error(std::string("illegal region transition ") + to_string(from) + " -> " + to_string(to))
{}

}  // namespace hetpu::ckpt
