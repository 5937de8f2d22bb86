// SPDX-License-Identifier: LGPL-2.1-or-later
// What the checkpoint backend's C++ code throws: the message names the path or checkpoint
// and the fix, and code() is the -errno that the C API (hetpu/ckpt.h) returns for it, which
// callers tell apart (-ENOENT: no such version, -EBUSY: directory in use, ...).
#pragma once

#include <stdexcept>
#include <string>

namespace hetpu::ckpt {

class Error : public std::runtime_error {
public:
    Error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }  // a negative errno

private:
    int code_;
};

}  // namespace hetpu::ckpt
