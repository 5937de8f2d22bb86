// SPDX-License-Identifier: LGPL-2.1-or-later
// Discrete per-processor profiles and workload distributions: the data model shared by
// HPOPTA, HEPOPTA and HTPOPTA. Pure C++17, no StarPU.
//
// A profile is a finite set of measured points (size, time, dynamic energy). Sizes are in
// granule units (an integer number of the application's smallest divisible block), so a
// distribution is an integer vector. Nothing is assumed about the shape of a profile: points
// may be missing, and time/energy need not be monotone or convex in the size. Size 0 is
// always allowed and means "processor idle" (time 0, energy 0); it need not be listed.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetpu {

using Granules = std::int64_t;

struct ProfilePoint {
    Granules size = 0;    // workload in granules, > 0 (or the redundant idle point 0,0,0)
    double time_s = 0;    // execution time of `size` on this processor, > 0
    double energy_j = 0;  // dynamic energy of `size` on this processor, >= 0
};

struct ProcessorProfile {
    std::string name;                  // only used in error messages
    std::vector<ProfilePoint> points;  // any order
};

// One workload distribution and its objectives, evaluated exactly from the profiles.
struct Distribution {
    std::vector<Granules> sizes;  // x_0..x_{p-1}, summing to the workload n
    double time_s = 0;            // max_i t_i(x_i)
    double dynamic_energy_j = 0;  // sum_i e_i(x_i), summed in processor order 0..p-1
    double total_energy_j = 0;    // dynamic + P_S * time (P_S = 0 for HEPOPTA/HPOPTA)
    int active = 0;               // processors with x_i > 0
};

// Bad input (malformed profile, bad workload or base power). The message names the
// processor and point at fault.
class InvalidProfileError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// The profiles are valid but no combination of their sizes (plus idle) sums to n. Reported
// as an error rather than as an empty front so that a caller cannot mistake "impossible"
// for "nothing is Pareto-optimal".
class UnreachableWorkloadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Largest workload the exact algorithms accept. Their tables are dense in the workload
// (O(p * n) cells), so n must be expressed in coarse enough granules.
constexpr Granules kMaxParetoWorkload = Granules(1) << 20;

// Throws InvalidProfileError unless: p >= 1; 0 <= n <= kMaxParetoWorkload; every point has
// size > 0, finite time > 0 and finite energy >= 0 (a size-0 point is tolerated only as the
// idle point (0, 0, 0)); no size appears twice in one profile.
void validate_profiles(const std::vector<ProcessorProfile> &profiles, Granules n);

// Throws InvalidProfileError unless base power is finite and >= 0.
void validate_base_power(double base_power_w);

// Evaluates `sizes` against the profiles: time, dynamic energy (summed in processor order,
// the one canonical order every reported figure uses, so figures are reproducible bit for
// bit), total energy with `base_power_w`, and the active count. Throws InvalidProfileError
// if a size is not a point of its profile (and not 0) or the vector has the wrong length.
Distribution evaluate_distribution(const std::vector<ProcessorProfile> &profiles, const std::vector<Granules> &sizes,
                                   double base_power_w = 0.0);

}  // namespace hetpu
