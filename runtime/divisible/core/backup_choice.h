// SPDX-License-Identifier: LGPL-2.1-or-later
// Backup copies at the tail of a divisible job: once every element is handed out, a unit
// left idle may run a copy of a block another unit started; the first copy to end counts.
// Without them no online plan bounds its loss: a started block cannot be taken back, and
// one block on a unit of unknown speed can outlast the rest of the job. Pure C++.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/divisible/core/unit_queues.h"

namespace hetpu {

// A block handed out that has no copy yet: its unit's running one (started_s), or one
// queued behind it, whose expected end the caller gives (queued_end_s >= 0).
struct BackupCandidate {
    int worker = -1;
    uint64_t block = 0;  // its Assignment id
    uint64_t count = 0;
    double started_s = 0;
    double queued_end_s = -1;
};

struct BackupChoice {
    int worker = -1;     // who runs the copy
    uint64_t block = 0;  // of which block
};

// When a started block is expected to end: its start plus the planner's expectation; on a
// unit with no measurement, or once it is late (its model no longer explains it: a stall, a
// slowdown), as long again as it has already run, and at least a quarter of its expectation.
double expected_end_s(const QueuePlanner &planner, double now_s, const BackupCandidate &b);

// A unit not idle now, and when what it holds is expected to end.
struct BusyUnitEnd {
    int worker = -1;
    double free_s = 0;
};

// The copies worth making now: each idle unit with a measurement copies at most one block,
// each block is copied at most once, and only where the copy, started one hand-out lead
// from now, is expected to end before the block itself; the largest gains first. A block
// that a unit still busy (`busy`) would end sooner, once free, than any idle unit waits for
// it: its one copy is not spent on a slower unit that happens to be idle first.
std::vector<BackupChoice> choose_backups(const QueuePlanner &planner, double now_s,
                                         const std::vector<BackupCandidate> &started, const std::vector<int> &idle,
                                         const std::vector<BusyUnitEnd> &busy = {});

}  // namespace hetpu
