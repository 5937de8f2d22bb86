// SPDX-License-Identifier: LGPL-2.1-or-later
// Where calibrated profiles live: $HETPU_HOME/profiles/<job>.csv, written by
// `hetpu calibrate` and read by the hepopta/htpopta policies. Pure C++, no StarPU.
#pragma once

#include <string>

#include "common/settings.h"  // hetpu_home(): the folder profiles live in

namespace hetpu {

// <home>/profiles/<job>.csv. Returns "" when the job name is empty or has characters other
// than letters, digits, '_', '-' and '.' (it becomes a file name), or starts with '.'.
std::string profile_path(const std::string &home, const std::string &job);

}  // namespace hetpu
