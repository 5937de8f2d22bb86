// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu mgb-sim`: a batch of GPU jobs on a simulated node under sa, cg, mgb, mgb-exact or
// schedgpu, driven by the MGB core (see simulator.h for the model).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tools/mgb_sim/simulator.h"

namespace hetpu::mgb_sim {

int mgb_sim_command(int argc, char **argv);

// The JSON object printed for one run (numbers round-trip: nlohmann prints doubles with
// enough digits). per_job adds every job's record.
nlohmann::json result_to_json(const SimResult &r, bool per_job);

}  // namespace hetpu::mgb_sim
