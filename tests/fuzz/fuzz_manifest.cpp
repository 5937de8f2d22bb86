// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: checkpoint manifests read back from disk (a torn or foreign file must be
// refused with a message) and kmeans checkpoint headers.
#include <cstdint>
#include <string>

#include "apps/kmeans/kmeans_checkpoint_format.h"
#include "ckpt_backend/core/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // A malformed manifest is an Error; any other exception escapes and is a finding.
    try {
        hetpu::ckpt::parse_manifest(std::string(reinterpret_cast<const char *>(data), size));
    } catch (const hetpu::ckpt::Error &) {
    }
    std::string error;
    if (size >= hetpu::kmeans::kCheckpointHeaderSize) {
        hetpu::kmeans::InputFingerprint expected;
        expected.n = 1000;
        expected.d = 2;
        expected.k = 3;
        hetpu::kmeans::check_checkpoint_header(data, expected, error);
    }
    return 0;
}
