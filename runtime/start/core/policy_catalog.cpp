// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/start/core/policy_catalog.h"

#include <algorithm>
#include <sstream>

namespace hetpu {

void PolicyCatalog::add(PolicyEntry entry)
{
    if (entry.name.empty() || find(entry.name))
        return;
    entries_.push_back(std::move(entry));
}

const PolicyEntry *PolicyCatalog::find(std::string_view name) const
{
    for (const auto &e : entries_)
        if (e.name == name)
            return &e;
    return nullptr;
}

std::string PolicyCatalog::help_text() const
{
    std::size_t width = 0;
    for (const auto &e : entries_)
        width = std::max(width, e.name.size());
    std::ostringstream out;
    for (bool hetpu_section : {true, false}) {
        out << (hetpu_section ? "hetpu policies:\n" : "StarPU built-in policies:\n");
        bool any = false;
        for (const auto &e : entries_) {
            if (e.from_hetpu != hetpu_section)
                continue;
            any = true;
            out << "  " << e.name << std::string(width - e.name.size() + 2, ' ')
                << (e.description.empty() ? "(no description)" : e.description) << '\n';
        }
        if (!any)
            out << "  (none)\n";
    }
    return out.str();
}

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string PolicyCatalog::closest_name(std::string_view name) const
{
    std::string best;
    std::size_t best_distance = 0;
    for (const auto &e : entries_) {
        std::size_t d = edit_distance(name, e.name);
        if (best.empty() || d < best_distance) {
            best = e.name;
            best_distance = d;
        }
    }
    // A suggestion further away than a third of the name is noise, not help.
    if (best.empty() || best_distance * 3 > std::max<std::size_t>(name.size(), 3))
        return "";
    return best;
}

std::string PolicyCatalog::unknown_name_message(std::string_view name, std::string_view source) const
{
    std::ostringstream out;
    out << "hetpu: unknown scheduling policy '" << name << "'";
    if (!source.empty())
        out << " in " << source;
    std::string suggestion = closest_name(name);
    if (!suggestion.empty())
        out << " (did you mean '" << suggestion << "'?)";
    out << "; valid names are:\n" << help_text();
    return out.str();
}

}  // namespace hetpu
