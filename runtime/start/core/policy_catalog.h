// SPDX-License-Identifier: LGPL-2.1-or-later
// The list of scheduling policies a user may name in STARPU_SCHED, and the messages built
// from it. Pure C++: the StarPU glue fills it from hetpu's registry and from
// starpu_sched_get_predefined_policies().
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hetpu {

struct PolicyEntry {
    std::string name;
    std::string description;
    bool from_hetpu = false;  // false: one of StarPU's built-ins
};

class PolicyCatalog {
public:
    // The first entry of a name wins: the glue adds hetpu's policies first, so a hetpu
    // policy can never be shadowed by a StarPU built-in of the same name.
    void add(PolicyEntry entry);

    const PolicyEntry *find(std::string_view name) const;
    const std::vector<PolicyEntry> &entries() const { return entries_; }

    // Two-section table (hetpu's, then StarPU's), one policy per line with its description.
    std::string help_text() const;

    // "unknown scheduling policy 'x' in STARPU_SCHED (did you mean 'y'?)" plus help_text().
    std::string unknown_name_message(std::string_view name, std::string_view source) const;

    // The closest known name by edit distance, or "" when nothing is reasonably close.
    std::string closest_name(std::string_view name) const;

private:
    std::vector<PolicyEntry> entries_;
};

// Levenshtein distance; used for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace hetpu
