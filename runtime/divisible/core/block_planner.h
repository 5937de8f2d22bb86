// SPDX-License-Identifier: LGPL-2.1-or-later
// What a hetpu policy plugs into the divisible-workload runner to choose block sizes
// (and, optionally, the worker of each block). Pure C++: PLB-HAC, HEPOPTA and friends
// implement this interface and are unit-tested without StarPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_cursor.h"

namespace hetpu {

enum class WorkerKind { Cpu, OpenCL, Cuda, Other };

const char *worker_kind_name(WorkerKind kind);

struct PlannerWorker {
    int id = -1;  // StarPU worker id
    WorkerKind kind = WorkerKind::Cpu;
    std::string name;
};

// One finished block, timed by StarPU's profiling information.
struct BlockDone {
    int worker = -1;
    uint64_t offset = 0;
    uint64_t count = 0;
    double exec_s = 0;      // end_time - start_time
    double transfer_s = 0;  // acquire_data_end_time - acquire_data_start_time
    double end_s = 0;       // when it completed, seconds since the run started
    // When the runner submitted it, seconds since the run started (< 0: unknown). With
    // end_s it bounds what the block really took, profiled or not (see PlbhacPlanner).
    double submitted_s = -1;
    // The Assignment's id (0: unknown, e.g. a runner that does not track them) and whether
    // it was a backup copy (which ran into private output).
    uint64_t id = 0;
    bool backup = false;
};

class PlannerExtensions;

class BlockPlanner {
public:
    virtual ~BlockPlanner() = default;

    virtual std::string name() const = 0;

    // true: every block is given to the worker passed to next_block() and runs there;
    // false: blocks are placed by the StarPU policy (first idle worker, dmda, ...).
    virtual bool assigns_workers() const = 0;

    // Size wanted for the next block of `worker` (-1 when !assigns_workers()), given how
    // many elements are still unassigned. 0 means "nothing for this worker now"; it is
    // asked again whenever any block completes (a planner may be waiting for another
    // worker, e.g. to end a training phase).
    virtual uint64_t next_block(int worker, uint64_t remaining) = 0;

    // Called for every completed block, in completion order.
    virtual void block_done(const BlockDone &) {}

    // What this planner offers beyond the calls above (planner_extensions.h), or null.
    // Runners use it where present; a planner without it loses nothing it asked for.
    virtual PlannerExtensions *extensions() { return nullptr; }
};

// Same block size for everyone, placement left to the StarPU policy: how built-in
// policies run a divisible job, and the greedy baseline of the PLB-HAC paper.
class FixedBlockPlanner final : public BlockPlanner {
public:
    explicit FixedBlockPlanner(uint64_t block) : block_(block) {}
    std::string name() const override { return "fixed"; }
    bool assigns_workers() const override { return false; }
    uint64_t next_block(int, uint64_t) override { return block_; }
    uint64_t block() const { return block_; }

private:
    uint64_t block_;
};

// Builds the planner of a hetpu policy for one job.
using PlannerFactory = std::unique_ptr<BlockPlanner> (*)(const std::vector<PlannerWorker> &workers,
                                                         const BlockRules &rules);

}  // namespace hetpu
