// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/profile_store.h"

#include <cctype>

namespace hetpu {

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
