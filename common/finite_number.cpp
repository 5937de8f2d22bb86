// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/finite_number.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace hetpu {

std::optional<double> finite_number(std::string_view text)
{
    if (text.empty() || text.front() == ' ' || text.front() == '\t' || text.front() == '\n' || text.front() == '\r' ||
        text.front() == '\f' || text.front() == '\v')
        return std::nullopt;
    const std::string buf(text);  // strtod needs a terminator; numerals may be long
    char *end = nullptr;
    const double v = std::strtod(buf.c_str(), &end);
    if (end != buf.c_str() + buf.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

}  // namespace hetpu
