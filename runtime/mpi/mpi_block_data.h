// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-block handles of a divisible job (block_handle_mask) as the multi-rank runners
// move them between ranks with StarPU-MPI: which ones a block reads (they travel to the
// rank that runs it) and which it writes (they travel back to the rank that keeps them).
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <hetpu/divisible.h>
#include <starpu.h>

#include <cstdint>
#include <vector>

namespace hetpu {

struct BlockBuffers {
    std::vector<starpu_data_handle_t> handles;
    std::vector<unsigned> index;  // buffer index in the task (gives the data tag)
    std::vector<bool> inbound;    // the codelet reads it: sent to the rank that runs the block
    std::vector<bool> outbound;   // the codelet writes it: sent back to the rank that keeps it

    unsigned count_inbound() const;
    unsigned count_outbound() const;
    uint64_t inbound_bytes() const;
    uint64_t outbound_bytes() const;
};

// Calls fill_task for [offset, offset + count) on a task that is never submitted and
// collects its per-block handles (registered over this rank's memory for that range).
// -ENOTSUP for scratch or reduction buffers (they have no meaning across ranks), or
// fill_task's error; the handles registered so far are in `out` either way.
int register_block_buffers(const hetpu_divisible_job &job, uint64_t offset, uint64_t count, BlockBuffers &out);

// The per-block handles of a task fill_task has just filled.
int block_buffers(const hetpu_divisible_job &job, struct starpu_task *task, BlockBuffers &out);

// Waits for the handles' pending transfers, then lets go of them (the data stay where
// they are in the application's memory).
void unregister_all(const BlockBuffers &b);

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
