// SPDX-License-Identifier: LGPL-2.1-or-later
// Parsing a JSON document a user wrote, so that a value the library itself refuses (a number
// past a double's range such as 1e400, a malformed token) is reported with the field it sits
// in ("jobs[3].kernels[0].seconds"), as every other error of an input file is. Header-only;
// nlohmann-json's parser callback gives the position in the tree as it parses.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hetpu {

// What the library refused, and where: `field` is the path of the value being read ("" at
// the top level), `what` the library's own words without its "[json.exception...]" prefix.
struct JsonFieldError : std::runtime_error {
    JsonFieldError(std::string field_, const std::string &what_)
        : std::runtime_error((field_.empty() ? std::string("(top level)") : field_) + ": " + what_),
          field(std::move(field_))
    {}
    std::string field;
};

inline nlohmann::json parse_json_with_fields(const std::string &text)
{
    struct Frame {
        bool array = false;
        std::size_t index = 0;  // arrays: the element being read
        std::string key;        // objects: the member being read
    };
    std::vector<Frame> frames;
    using event = nlohmann::json::parse_event_t;
    auto track = [&frames](int, event e, nlohmann::json &parsed) {
        switch (e) {
        case event::object_start: frames.push_back({false, 0, ""}); break;
        case event::array_start: frames.push_back({true, 0, ""}); break;
        case event::key: frames.back().key = parsed.get<std::string>(); break;
        case event::object_end:
        case event::array_end:
            frames.pop_back();
            if (!frames.empty() && frames.back().array)
                ++frames.back().index;
            break;
        case event::value:
            if (!frames.empty() && frames.back().array)
                ++frames.back().index;
            break;
        }
        return true;
    };
    try {
        return nlohmann::json::parse(text, track);
    } catch (const nlohmann::json::exception &e) {
        std::string field;
        for (const Frame &f : frames)
            field += f.array ? "[" + std::to_string(f.index) + "]" : (field.empty() ? "" : ".") + f.key;
        std::string what = e.what();
        if (const std::size_t close = what.find("] ");
            what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
            what = what.substr(close + 2);
        throw JsonFieldError(field, what);
    }
}

}  // namespace hetpu
