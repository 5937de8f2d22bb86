// SPDX-License-Identifier: LGPL-2.1-or-later
// Losing copies still running after their job returned, process-wide: their units count as
// busy for the next job (BlockDispatcher::unit_busy), and hetpu_divisible_wait_copies()
// (hetpu_shutdown() too) waits until every task of a returned job has ended and its output
// has been discarded. StarPU glue.
#pragma once

#include <cstdint>
#include <vector>

namespace hetpu {

struct BusyUnit {
    const void *run = nullptr;  // the run it belongs to
    uint64_t id = 0;            // its Assignment id in that run
    int worker = -1;
    double end_us = 0;  // expected end, on starpu_timing_now()'s clock
};

// A job returned with `tasks` tasks not yet settled (ended, output discarded), of which
// `busy` are losing copies still running.
void copies_outlive_job(unsigned tasks, const std::vector<BusyUnit> &busy);
// A losing copy of a returned job ended: its unit is free.
void late_copy_ended(const void *run, uint64_t id);
// A task of a returned job settled.
void late_task_settled();
// The units busy now with copies of returned jobs.
std::vector<BusyUnit> units_busy_with_copies();
// Waits until every task of every returned job has settled.
void wait_for_late_tasks();

}  // namespace hetpu
