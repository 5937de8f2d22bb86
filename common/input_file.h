// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading a whole file that the user named. One place decides what a clear message is: a
// directory opens fine with std::ifstream and reads as empty, which used to surface as
// "not valid JSON" or "the file is empty" far from the real mistake.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace hetpu {

// Reads `path` into `text`. On failure returns false and sets `why` to a reason that names
// what the path is ("is a directory, not a file", "No such file or directory", ...), to be
// prefixed by the caller's context. errno is set on failure (EISDIR for a directory).
inline bool read_whole_file(const std::string &path, std::string &text, std::string &why)
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
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        errno = EIO;
        why = "read error";
        return false;
    }
    text = ss.str();
    return true;
}

}  // namespace hetpu
