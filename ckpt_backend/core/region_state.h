// SPDX-License-Identifier: LGPL-2.1-or-later
// Life cycle of one checkpoint region inside one cache tier (seed slide 32: one state
// machine for both the checkpoint and the restore direction, so a region written by a
// checkpoint can serve a restore without a round trip through the disk).
//
//   checkpoint side:  Writing -> Cached -> Flushed -> Evictable -> (gone)
//   restore side:     Prefetching -> Ready -> Consumed -> Evictable -> (gone)
//   crossing over:    Flushed -> Ready  (a cached checkpoint is hinted for restore)
//                     Consumed -> Ready (restored again)
//
// Writing: bytes are being copied in; Cached: complete here but the only copy below the
// application (must not be evicted); Flushed: the next tier holds a durable copy;
// Prefetching: being read back from a lower tier; Ready: holds a hinted region awaiting its
// restore; Consumed: its restore has read it; Evictable: picked as a victim, its bytes are
// about to be released (no reader may start on it).
#pragma once

#include <stdexcept>
#include <string>

namespace hetpu::ckpt {

enum class RegionState { Writing, Cached, Flushed, Prefetching, Ready, Consumed, Evictable };

const char *to_string(RegionState s);
bool is_legal_transition(RegionState from, RegionState to);
// A region may be chosen as an eviction victim only when a lower tier holds it durably and
// nobody is writing into it: Flushed, Ready and Consumed.
bool may_evict(RegionState s);
// A restore may read the bytes of a region in these states.
bool is_readable(RegionState s);

class IllegalTransition : public std::logic_error {
public:
    IllegalTransition(RegionState from, RegionState to);
};

// One region's state with the transition check applied on every change.
class RegionLifecycle {
public:
    explicit RegionLifecycle(RegionState born) : state_(born)
    {
        if (born != RegionState::Writing && born != RegionState::Prefetching)
            throw IllegalTransition(born, born);
    }
    RegionState state() const { return state_; }
    void advance(RegionState to)
    {
        if (!is_legal_transition(state_, to))
            throw IllegalTransition(state_, to);
        state_ = to;
    }

private:
    RegionState state_;
};

}  // namespace hetpu::ckpt
