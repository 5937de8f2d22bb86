// SPDX-License-Identifier: LGPL-2.1-or-later
// Which data a process's tasks hold on each device. A handle used by several tasks placed
// on the same device occupies its memory once, so a task is charged only for the handles
// that no other queued or running task of the process already holds there.
// Handles are opaque keys here (StarPU's starpu_data_handle_t in the policies).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hetpu::mgb {

struct HandleUse {
    const void *handle;
    uint64_t bytes;
};

class HandleResidency {
public:
    explicit HandleResidency(unsigned ndevices) : held_(ndevices) {}

    // Bytes the task adds on device: its distinct handles not held there yet.
    uint64_t new_bytes(unsigned device, const std::vector<HandleUse> &handles) const;
    // The task's distinct handles are held / no longer held by one more task on device.
    void hold(unsigned device, const std::vector<HandleUse> &handles);
    void drop(unsigned device, const std::vector<HandleUse> &handles);
    unsigned holders(unsigned device, const void *handle) const;

    // Distinct handles in first-use order (a task may name one handle twice).
    static std::vector<HandleUse> distinct(const std::vector<HandleUse> &handles);

private:
    std::vector<std::unordered_map<const void *, unsigned>> held_;
};

}  // namespace hetpu::mgb
