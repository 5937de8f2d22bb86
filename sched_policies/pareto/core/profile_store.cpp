// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/profile_store.h"

#include <cctype>

namespace hetpu {

std::string hetpu_home(const EnvLookup &getenv)
{
    auto get = [&](const char *name) -> std::string {
        const char *v = getenv(name);
        return v ? v : "";
    };
    if (std::string h = get("HETPU_HOME"); !h.empty())
        return h;
    if (std::string x = get("XDG_DATA_HOME"); !x.empty())
        return x + "/hetpu";
    if (std::string home = get("HOME"); !home.empty())
        return home + "/.local/share/hetpu";
    return "";
}

std::string profile_path(const std::string &home, const std::string &job)
{
    if (home.empty() || job.empty() || job[0] == '.')
        return "";
    for (char c : job)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
            return "";
    return home + "/profiles/" + job + ".csv";
}

}  // namespace hetpu
