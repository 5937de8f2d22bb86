// SPDX-License-Identifier: LGPL-2.1-or-later
// Every load-balancing policy by name, with its planner family: the one list that the
// StarPU policies (load_balancing.cpp), `hetpu sim` and `hetpu cluster-sim` read, so that a
// policy registered here runs under StarPU and in both simulators at once. Each family
// builds its planners from a PlannerContext: what its surroundings inject (settings, where
// learnt models are kept, where the plan's trace goes, calibrated profiles), so that the
// family itself never asks where it runs. Pure C++, no StarPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/settings.h"
#include "runtime/divisible/core/block_planner.h"

namespace hetpu {

// Time and dynamic energy of blocks on each worker, as a calibration measured them
// (`hetpu calibrate` writes them to a profile file): what hepopta and htpopta plan from.
struct CalibratedProfiles {
    std::vector<uint64_t> sizes;  // the block sizes measured on every worker, in elements
    std::function<double(int worker, uint64_t elements)> time_s;
    std::function<double(int worker, uint64_t elements)> energy_j;
    double base_power_w = -1;  // the node's static power (htpopta); < 0: unknown
    std::string source;        // names them in messages
};

// What a planner's surroundings hand its family: the real node under StarPU
// (node_planner_context), a simulated machine in the simulators, a fixture in tests.
struct PlannerContext {
    std::string policy;  // the policy's name, for messages
    // HETPU_* settings by name.
    EnvLookup env = process_env;
    // One message for the user, without a prefix (the surroundings add theirs). Unset: dropped.
    std::function<void(const std::string &)> say;
    // First block when no setting names one (a simulated machine's x_init); 0: the family's own default.
    uint64_t x_init = 0;
    // Where models learnt by a job are kept for later jobs of the same name and size:
    // models_home/<family's folder> on disk under the machine name `host` ("" home: only in
    // this process; unnamed jobs never keep any).
    std::string models_home;
    std::string host;
    // One JSON line per completed block, for a family that records what it planned (HETPU_TRACE
    // under StarPU, --plan-trace in `hetpu sim`). Unset: no trace.
    std::function<void(const std::string &)> trace;
    // Profiles to plan from instead of the job's profile file under $HETPU_HOME. Null: the file.
    std::shared_ptr<const CalibratedProfiles> profiles;

    void report(const std::string &line) const
    {
        if (say)
            say(line);
    }
};

// Builds the planner of one job; null after saying why through the context (a bad setting,
// an unreadable profile file): the job then fails instead of running unplanned.
using PlannerFamily = std::unique_ptr<BlockPlanner> (*)(const PlannerContext &context,
                                                        const std::vector<PlannerWorker> &workers,
                                                        const BlockRules &rules);

// What of the context a family reads beyond settings, so that a tool can refuse an option
// the policy would ignore.
enum PlannerUses : unsigned {
    kUsesTrace = 1,         // PlannerContext::trace
    kUsesModels = 2,        // PlannerContext::models_home
    kUsesCodeletModel = 4,  // BlockRules::codelet_expected_s: starts from StarPU's calibration
    kUsesProfiles = 8,      // PlannerContext::profiles
};

struct PlannerPolicy {
    std::string name;
    std::string description;
    // Null: no planner; blocks of a fixed size go to the first idle worker (greedy).
    PlannerFamily make = nullptr;
    // The blocks that no planner gave a worker go to the first idle worker that can run them
    // (else StarPU's component tree places them like the program's ordinary tasks):
    // component_policy.h.
    bool unplaced_blocks_first_idle = false;
    unsigned uses = 0;  // PlannerUses
};

// In the order STARPU_SCHED=help lists them.
const std::vector<PlannerPolicy> &planner_policies();
const PlannerPolicy *find_planner_policy(std::string_view name);
// The names of the policies whose `uses` has all of `uses`, joined by `separator`.
std::string planner_policy_names(unsigned uses, const char *separator);

// What a planner that learns online tells about its run, for reports (`hetpu sim`): found
// by dynamic_cast on the BlockPlanner.
class LearningPlanner {
public:
    virtual ~LearningPlanner() = default;
    // Seconds from the start of the job to the end of its training (0 for a warm start).
    virtual double training_s() const = 0;
    virtual bool warm_started() const = 0;  // started from models learnt before
    virtual unsigned solve_failures() const = 0;
};

}  // namespace hetpu
