// SPDX-License-Identifier: LGPL-2.1-or-later
// A fingerprint of a file's bytes, so that the ranks of a multi-rank job can tell they read
// the same input (hetpu_mpi_same_job's data tokens): 64-bit FNV-1a over the whole file, read
// in chunks. Not a cryptographic hash: it catches a different or changed file, not a forged one.
#pragma once

#include <cstdint>
#include <string>

namespace hetpu {

// The fingerprint of the file at `path`; false with `error` ("PATH: why") when it cannot be read.
bool file_fingerprint(const std::string &path, uint64_t &fingerprint, std::string &error);

// The token hetpu_mpi_same_job compares for a rank's input: "data:PATH=HEX", the path with
// spaces and '%' percent-encoded so that it stays one token.
std::string data_token(const std::string &path, uint64_t fingerprint);

}  // namespace hetpu
