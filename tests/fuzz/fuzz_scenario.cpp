// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: `hetpu sim` scenarios (JSON). A ScenarioError is the clear error the
// tool prints; any other exception escaping is a finding (6e666 once aborted the tool).
#include <cstdint>
#include <string>

#include "tools/sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        hetpu::sim::parse_scenario(std::string(reinterpret_cast<const char *>(data), size));
    } catch (const hetpu::sim::ScenarioError &) {
    }
    return 0;
}
