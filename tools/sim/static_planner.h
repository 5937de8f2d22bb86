// SPDX-License-Identifier: LGPL-2.1-or-later
// A fixed distribution run as a planner: every unit gets its block once, and nothing else.
// `hetpu sim --policy optimum-noisy` runs the exact optimum's distribution this way, so that
// the scenario's timing noise and slowdowns apply to it as to the dynamic policies: what a
// plan made with perfect knowledge of the mean times achieves on the noisy machine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/divisible/core/block_planner.h"

namespace hetpu::sim {

class StaticPlanner final : public BlockPlanner {
public:
    // blocks[i]: elements for the worker with id i (0 for none).
    StaticPlanner(std::string name, std::vector<uint64_t> blocks) : name_(std::move(name)), blocks_(std::move(blocks))
    {
        taken_.assign(blocks_.size(), false);
    }
    std::string name() const override { return name_; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t remaining) override
    {
        if (worker < 0 || static_cast<size_t>(worker) >= blocks_.size() || taken_[worker])
            return 0;
        taken_[worker] = true;
        return std::min(blocks_[worker], remaining);
    }

private:
    std::string name_;
    std::vector<uint64_t> blocks_;
    std::vector<bool> taken_;
};

}  // namespace hetpu::sim
