// SPDX-License-Identifier: LGPL-2.1-or-later
// What each rank sustained on a job is kept in its own $HETPU_HOME (node_rates.txt), so the
// next run's initial shares follow the nodes' speeds and re-sharing is left for what
// changed. The key names the job (name and size), the policy (a node's speed depends on how
// it is planned) and the rank's workers.
#pragma once

#include <hetpu/divisible.h>

#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"

namespace hetpu {

std::string node_rate_key(const hetpu_divisible_job &job, const std::vector<PlannerWorker> &local);

// Elements per second saved under key, 0 when none (or the file is unreadable).
double load_node_rate(const std::string &key);

// Saves rate under key (the file is replaced whole); a bad rate or key is ignored.
void save_node_rate(const std::string &key, double rate);

}  // namespace hetpu
