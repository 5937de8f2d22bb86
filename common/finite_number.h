// SPDX-License-Identifier: LGPL-2.1-or-later
// The one parser of real numbers that hetpu reads from files, the environment and command
// lines: the whole text must be one finite number, with no blank around it (callers that
// allow blanks trim first). strtod alone accepts leading blanks, trailing junk when its end
// pointer is not checked, "inf" and "nan"; every earlier copy got a different subset wrong.
#pragma once

#include <optional>
#include <string_view>

namespace hetpu {

// A value that underflows is the nearest double (1e-320 is a number like any other); one
// that overflows is rejected with the infinities and NaN.
std::optional<double> finite_number(std::string_view text);

}  // namespace hetpu
