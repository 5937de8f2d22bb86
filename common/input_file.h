// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading a whole file that the user named. One place decides what a clear message is: a
// directory opens fine with std::ifstream and reads as empty, which used to surface as
// "not valid JSON" or "the file is empty" far from the real mistake.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace hetpu {

// Reads `path` into `text`. On failure returns false and sets `why` to a reason that names
// what the path is ("is a directory, not a file", "No such file or directory", "is larger
// than 64 MiB", ...), to be prefixed by the caller's context. errno is set on failure (EISDIR
// for a directory, EFBIG past `max_bytes`: a device such as /dev/zero never ends, and a
// reader must not take all memory before saying so).
inline bool read_whole_file(const std::string &path, std::string &text, std::string &why,
                            std::uint64_t max_bytes = UINT64_MAX)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        why = std::strerror(errno);
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        why = "is a directory, not a file";
        return false;
    }
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (!errno)
            errno = EACCES;
        why = std::strerror(errno);
        return false;
    }
    std::string read;
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
        read.append(chunk, std::size_t(in.gcount()));
        if (read.size() > max_bytes) {
            errno = EFBIG;
            why = "is larger than " + std::to_string(max_bytes >> 20) + " MiB (" + std::to_string(max_bytes) +
                  " bytes), the most this reader takes";
            return false;
        }
    }
    if (in.bad()) {
        errno = EIO;
        why = "read error";
        return false;
    }
    text = std::move(read);
    return true;
}

}  // namespace hetpu
