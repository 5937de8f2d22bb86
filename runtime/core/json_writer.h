// SPDX-License-Identifier: LGPL-2.1-or-later
// A small streaming JSON writer for the one-object-per-line result files (JSON lines).
// Hand-written because a result line needs only objects, arrays, strings and numbers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hetpu {

class JsonWriter {
public:
    JsonWriter &begin_object();
    JsonWriter &end_object();
    JsonWriter &begin_array(std::string_view key);
    JsonWriter &end_array();
    JsonWriter &key(std::string_view k);
    JsonWriter &value(std::string_view v);
    JsonWriter &value(const char *v) { return value(std::string_view(v ? v : "")); }
    JsonWriter &value(double v);
    JsonWriter &value(long long v);
    JsonWriter &value(unsigned long long v);
    JsonWriter &value(int v) { return value(static_cast<long long>(v)); }
    JsonWriter &value(unsigned v) { return value(static_cast<unsigned long long>(v)); }
    JsonWriter &value(unsigned long v) { return value(static_cast<unsigned long long>(v)); }
    JsonWriter &value(long v) { return value(static_cast<long long>(v)); }
    JsonWriter &value(bool v);
    JsonWriter &null();
    template <typename T> JsonWriter &field(std::string_view k, T v) { return key(k).value(v); }

    const std::string &str() const { return out_; }

    static std::string escape(std::string_view s);

private:
    void separator();
    std::string out_;
    std::vector<bool> first_;  // per open container: no element written yet
    bool after_key_ = false;
};

}  // namespace hetpu
