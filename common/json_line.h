// SPDX-License-Identifier: LGPL-2.1-or-later
// One JSON-lines record from an nlohmann object. ordered_json keeps the fields in the order
// they are added (a record reads like its schema); numbers are printed in the shortest form
// that parses back to the same double, so a consumer can compare them exactly. Text that is
// not valid UTF-8 (a device or host name) is replaced rather than aborting the record.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace hetpu {

using JsonRecord = nlohmann::ordered_json;

inline std::string json_line(const JsonRecord &record)
{
    return record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace hetpu
