// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/core/json_writer.h"

#include <cmath>
#include <cstdio>

namespace hetpu {

std::string JsonWriter::escape(std::string_view s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out + "\"";
}

void JsonWriter::separator()
{
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back())
            out_ += ',';
        first_.back() = false;
    }
}

JsonWriter &JsonWriter::begin_object()
{
    separator();
    out_ += '{';
    first_.push_back(true);
    return *this;
}

JsonWriter &JsonWriter::end_object()
{
    out_ += '}';
    first_.pop_back();
    return *this;
}

JsonWriter &JsonWriter::begin_array(std::string_view k)
{
    key(k);
    separator();
    out_ += '[';
    first_.push_back(true);
    return *this;
}

JsonWriter &JsonWriter::end_array()
{
    out_ += ']';
    first_.pop_back();
    return *this;
}

JsonWriter &JsonWriter::key(std::string_view k)
{
    separator();
    out_ += escape(k);
    out_ += ':';
    after_key_ = true;
    return *this;
}

JsonWriter &JsonWriter::value(std::string_view v)
{
    separator();
    out_ += escape(v);
    return *this;
}

JsonWriter &JsonWriter::value(double v)
{
    separator();
    if (!std::isfinite(v)) {
        out_ += "null";  // JSON has no NaN or infinity
        return *this;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out_ += buf;
    return *this;
}

JsonWriter &JsonWriter::value(long long v)
{
    separator();
    out_ += std::to_string(v);
    return *this;
}

JsonWriter &JsonWriter::value(unsigned long long v)
{
    separator();
    out_ += std::to_string(v);
    return *this;
}

JsonWriter &JsonWriter::value(bool v)
{
    separator();
    out_ += v ? "true" : "false";
    return *this;
}

JsonWriter &JsonWriter::null()
{
    separator();
    out_ += "null";
    return *this;
}

}  // namespace hetpu
