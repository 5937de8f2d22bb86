// SPDX-License-Identifier: LGPL-2.1-or-later
// The XXH3-64 digest of an app's result, as 16 hex digits: equal digests, bit-identical
// results (the tests compare runs with and without backup copies by it). Header-only.
#pragma once

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace hetpu::apps {

class ResultDigest {
public:
    ResultDigest() { XXH3_64bits_reset(&state_); }
    // Adds the bytes of the next piece of the result, in the result's order.
    void add(const void *data, std::size_t bytes) { XXH3_64bits_update(&state_, data, bytes); }
    std::string hex()
    {
        char buf[17];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(XXH3_64bits_digest(&state_)));
        return buf;
    }

private:
    XXH3_state_t state_;
};

}  // namespace hetpu::apps
