// SPDX-License-Identifier: LGPL-2.1-or-later
// Computed Pareto fronts kept on disk, so that every run of the same job with the same
// calibrated profiles does not search again: the hepopta/htpopta policies pay the search
// once per (profile file, its content, workload, objective, base power, processors).
// Pure C++, no StarPU.
//
// One file per key under <dir> (the policies use $HETPU_HOME/fronts), named by a hash of
// the key; the file repeats the whole key, so a hash collision or a file copied from
// elsewhere is recognised as foreign. Writes go to a temporary file in the same directory
// and are renamed over the target: readers see the old file or the new one, never half of
// one, even with concurrent jobs. A file that is unreadable, of another format version,
// corrupt or foreign is ignored with a one-line warning and replaced by the next store.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched_policies/pareto/core/pareto_front.h"

namespace hetpu {

// FNV-1a, 64 bits: identifies a profile file's content (not a security measure).
std::uint64_t content_hash(const std::string &bytes);

struct FrontKey {
    std::string profile_path;        // as given; part of the key, not read here
    std::uint64_t profile_hash = 0;  // content_hash() of the profile file's bytes
    std::uint64_t workload = 0;      // elements
    EnergyObjective objective = EnergyObjective::Dynamic;
    double base_power_w = 0;              // P_S (Total only; 0 for Dynamic)
    std::vector<std::string> processors;  // the profiled processors used, in front order
};

// A stored front: distributions in granules of `granule` elements, as the planner uses them.
struct CachedFront {
    std::uint64_t granule = 1;
    std::vector<Distribution> front;
};

class FrontCache {
public:
    using Warn = std::function<void(const std::string &)>;

    // `warn` receives one line per ignored file or failed store (no trailing newline).
    FrontCache(std::string dir, Warn warn);

    // The file that holds `key`.
    std::string path_for(const FrontKey &key) const;

    // True and `out` filled when a valid file for exactly `key` exists.
    bool load(const FrontKey &key, CachedFront &out) const;

    // Writes atomically; returns false (after a warning) when the directory or the file
    // cannot be written, which only costs the next run a search.
    bool store(const FrontKey &key, const CachedFront &front) const;

private:
    std::string dir_;
    Warn warn_;
};

}  // namespace hetpu
