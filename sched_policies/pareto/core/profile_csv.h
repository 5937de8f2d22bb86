// SPDX-License-Identifier: LGPL-2.1-or-later
// The profile CSV that `hetpu calibrate` writes and `hetpu pareto` and the hepopta/htpopta
// policies read: one row per measured point,
//
//   processor,size,time_s,energy_j[,more columns...]
//   cpu0,256,0.0123,0.41
//
// size is an integer number of the application's elements (columns, rows, ...), time_s
// the execution time of that many elements on that processor, energy_j its dynamic energy.
// Extra columns (calibrate adds energy_source, reps, ...) are allowed, and one called
// energy_source is kept per point so reports can say where each figure came from.
// Blank lines and lines starting with '#' are ignored, except a comment
// "# base_power_w=<watts>" (written by calibrate: the node's static power P_S that
// HTPOPTA's total energy needs). Fields may be double-quoted
// ("a,b", "say ""hi"""). Pure C++, no StarPU.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched_policies/pareto/core/pareto_profiles.h"

namespace hetpu {

// A problem with the CSV text: the message starts with "<source>:<line>: " and says how to
// fix it.
class ProfileCsvError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CsvPoint {
    std::uint64_t size = 0;  // elements
    double time_s = 0;
    double energy_j = 0;
    std::string energy_source;  // "" when the CSV has no energy_source column
    int line = 0;               // 1-based line of the CSV it came from
};

struct CsvProcessor {
    std::string name;
    std::vector<CsvPoint> points;  // in file order
};

// Processors in the order they first appear in the file.
struct ProfileSet {
    std::vector<CsvProcessor> processors;
    double base_power_w = -1;                 // from "# base_power_w=..."; -1 when absent
    int find(const std::string &name) const;  // index or -1
    std::vector<std::string> names() const;
};

// Parses CSV text. `source` names it in messages (a path). When `known` is not empty it is
// the complete list of processors expected: a row naming another processor is an error,
// and so is a listed processor without rows; the result then follows `known`'s order.
// Throws ProfileCsvError for: no header, a header without the four required columns, a row
// with the wrong number of fields, an unterminated quote, an empty or unknown processor,
// a size that is not a positive integer, a time that is not a positive finite number, an
// energy that is not a finite number >= 0, the same (processor, size) twice, no data rows.
ProfileSet parse_profile_csv(const std::string &text, const std::string &source,
                             const std::vector<std::string> &known = {});

// Reads and parses a file; a file that cannot be read is a ProfileCsvError too.
ProfileSet read_profile_csv(const std::string &path, const std::vector<std::string> &known = {});

// The profiles in granule units for a workload of `workload` elements: the granule is the
// greatest common divisor of every size and the workload, so that the exact algorithms'
// tables stay as small as the data allow.
struct GranularProfiles {
    std::uint64_t granule = 1;  // elements per granule
    Granules workload = 0;      // workload / granule
    std::vector<ProcessorProfile> profiles;
};

// Throws InvalidProfileError when the workload is 0 or still larger than
// kMaxParetoWorkload granules (the message says to measure coarser sizes).
GranularProfiles to_granules(const ProfileSet &set, std::uint64_t workload);

// Distinct energy_source values of the points, in first-appearance order ("" left out).
std::vector<std::string> energy_sources(const ProfileSet &set);

}  // namespace hetpu
