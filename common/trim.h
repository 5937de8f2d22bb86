// SPDX-License-Identifier: LGPL-2.1-or-later
// Text without the given characters at either end (by default spaces, tabs and the carriage
// return of a CRLF line), for every hand-read text format.
#pragma once

#include <string>
#include <string_view>

namespace hetpu {

inline std::string trim(std::string_view s, std::string_view chars = " \t\r")
{
    const std::size_t b = s.find_first_not_of(chars);
    if (b == std::string_view::npos)
        return "";
    return std::string(s.substr(b, s.find_last_not_of(chars) - b + 1));
}

}  // namespace hetpu
