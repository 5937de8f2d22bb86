// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: the checkpoint backend's TOML config and its size strings. Both return
// an error code with a message; no exception may escape (the C API promises 0 or -errno).
#include <cstdint>
#include <string>

#include "ckpt_backend/engine/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    // Bad input is an Error; any other exception escapes and is a finding.
    try {
        hetpu::ckpt::parse_config(text, "fuzz.toml");
    } catch (const hetpu::ckpt::Error &) {
    }
    try {
        hetpu::ckpt::parse_size(text);
    } catch (const hetpu::ckpt::Error &) {
    }
    return 0;
}
