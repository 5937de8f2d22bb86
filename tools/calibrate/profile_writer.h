// SPDX-License-Identifier: LGPL-2.1-or-later
// The profile CSV `hetpu calibrate` writes (read by profile_csv.h): comment lines saying
// how it was made, "# base_power_w=" (P_S for HTPOPTA), then
// processor,size,time_s,energy_j,energy_source,reps,time_rel_ci,energy_rel_ci. Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetpu::calibrate {

struct ProfileRow {
    std::string processor;
    uint64_t size = 0;
    double time_s = 0, energy_j = 0;
    std::string energy_source;
    unsigned reps = 0;
    double time_rel_ci = 0, energy_rel_ci = 0;  // half-width / mean of the 95% intervals
};

std::string format_profile_csv(const std::vector<std::string> &comments, double base_power_w,
                               const std::vector<ProfileRow> &rows);

// Writes `text` to `path` through a temporary file renamed into place, creating missing
// parent directories, so a reader never sees half a profile. Throws std::runtime_error.
void write_file_atomically(const std::string &path, const std::string &text);

}  // namespace hetpu::calibrate
