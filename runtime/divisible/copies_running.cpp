// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/copies_running.h"

#include <hetpu/divisible.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace hetpu {
namespace {

struct LateTasks {
    std::mutex mutex;
    std::condition_variable settled;
    unsigned unsettled = 0;
    std::vector<BusyUnit> busy;
};

LateTasks &late()
{
    static LateTasks state;
    return state;
}

}  // namespace

void copies_outlive_job(unsigned tasks, const std::vector<BusyUnit> &busy)
{
    LateTasks &l = late();
    std::lock_guard<std::mutex> lock(l.mutex);
    l.unsettled += tasks;
    l.busy.insert(l.busy.end(), busy.begin(), busy.end());
}

void late_copy_ended(const void *run, uint64_t id)
{
    LateTasks &l = late();
    std::lock_guard<std::mutex> lock(l.mutex);
    l.busy.erase(
        std::remove_if(l.busy.begin(), l.busy.end(), [&](const BusyUnit &b) { return b.run == run && b.id == id; }),
        l.busy.end());
}

void late_task_settled()
{
    LateTasks &l = late();
    std::lock_guard<std::mutex> lock(l.mutex);
    if (l.unsettled > 0 && --l.unsettled == 0)
        l.settled.notify_all();
}

std::vector<BusyUnit> units_busy_with_copies()
{
    LateTasks &l = late();
    std::lock_guard<std::mutex> lock(l.mutex);
    return l.busy;
}

void wait_for_late_tasks()
{
    LateTasks &l = late();
    std::unique_lock<std::mutex> lock(l.mutex);
    l.settled.wait(lock, [&] { return l.unsettled == 0; });
}

}  // namespace hetpu

extern "C" void hetpu_divisible_wait_copies(void) { hetpu::wait_for_late_tasks(); }
