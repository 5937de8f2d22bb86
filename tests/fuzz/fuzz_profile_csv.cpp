// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: the calibrated profiles read by hepopta/htpopta and `hetpu pareto`.
// ProfileCsvError and InvalidProfileError are the documented errors.
#include <cstdint>
#include <string>

#include "sched_policies/pareto/core/pareto_profiles.h"
#include "sched_policies/pareto/core/profile_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try {
        hetpu::ProfileSet set =
            hetpu::parse_profile_csv(std::string(reinterpret_cast<const char *>(data), size), "fuzz.csv");
        hetpu::to_granules(set, 1 + size % 4096);
    } catch (const hetpu::ProfileCsvError &) {
    } catch (const hetpu::InvalidProfileError &) {
    }
    return 0;
}
