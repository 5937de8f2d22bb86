// SPDX-License-Identifier: LGPL-2.1-or-later
// Which data a process's tasks hold on each device. A handle used by several tasks placed
// on the same device occupies its memory once, so a task is charged only for the handles
// that no other queued or running task of the process already holds there.
// Handles are opaque keys here (StarPU's starpu_data_handle_t in the policies).
//
// The first task to hold a handle on a device pays for it (its grant carries the bytes).
// The handle stays on the device while any task there uses it, so when the payer ends
// before the others its bytes move to the grant of a task still holding it (otherwise, with
// 32 tasks sharing one handle, the bytes would leave the ledger with the first task).
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

// Bytes a releasing grant hands to another grant whose task still holds the handle.
struct HandleTransfer {
    uint64_t to_grant;
    uint64_t bytes;
};

class HandleResidency {
public:
    explicit HandleResidency(unsigned ndevices) : held_(ndevices) {}

    // Bytes the task adds on device: its distinct handles not held there yet.
    uint64_t new_bytes(unsigned device, const std::vector<HandleUse> &handles) const;
    // The task of `grant` holds its distinct handles on device; it pays for those not held
    // there yet (exactly new_bytes of the same call).
    void hold(unsigned device, uint64_t grant, const std::vector<HandleUse> &handles);
    // The task of `grant` no longer holds them. Returns, per handle it paid for that another
    // task still holds, the grant that pays from now on: the caller moves the bytes
    // (ledger_release_handing_over) before the released grant's bytes leave the ledger.
    std::vector<HandleTransfer> drop(unsigned device, uint64_t grant, const std::vector<HandleUse> &handles);
    unsigned holders(unsigned device, const void *handle) const;
    uint64_t payer(unsigned device, const void *handle) const;  // 0: not held

    // Distinct handles in first-use order (a task may name one handle twice).
    static std::vector<HandleUse> distinct(const std::vector<HandleUse> &handles);

private:
    struct Held {
        std::vector<uint64_t> grants;  // holders, oldest first; the payer among them
        uint64_t payer = 0;
    };
    std::vector<std::unordered_map<const void *, Held>> held_;
};

}  // namespace hetpu::mgb
