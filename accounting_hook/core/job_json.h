// SPDX-License-Identifier: LGPL-2.1-or-later
// A JobRecord as JSON, one form for everything that writes or reads it: `hetpu su report
// --json` prints it, and the ranks of an MPI job send it to rank 0 (rank_merge.h).
#pragma once

#include <nlohmann/json.hpp>

#include "accounting_hook/core/job_record.h"

namespace hetpu::accounting {

// Every field of the record; fractions under "fractions" (cores, gpus, memory), what the
// process held per node under "held" (cores, gpus, memory_gib), the SU weight as "rate".
nlohmann::json job_to_json(const JobRecord &job);

// The inverse. Throws std::invalid_argument naming the problem for malformed input.
JobRecord job_from_json(const nlohmann::json &o);

}  // namespace hetpu::accounting
