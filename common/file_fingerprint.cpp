// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/file_fingerprint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace hetpu {

bool file_fingerprint(const std::string &path, uint64_t &fingerprint, std::string &error)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
    std::vector<unsigned char> buf(1 << 20);
    size_t got;
    while ((got = std::fread(buf.data(), 1, buf.size(), f)) > 0)
        for (size_t i = 0; i < got; ++i)
            h = (h ^ buf[i]) * 1099511628211ull;
    const bool ok = !std::ferror(f);
    std::fclose(f);
    if (!ok) {
        error = path + ": cannot read it to the end";
        return false;
    }
    fingerprint = h;
    return true;
}

std::string data_token(const std::string &path, uint64_t fingerprint)
{
    std::string token = "data:";
    for (char c : path) {
        if (c == ' ')
            token += "%20";
        else if (c == '%')
            token += "%25";
        else if (c == '\t' || c == '\n')
            token += c == '\t' ? "%09" : "%0A";
        else
            token += c;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fingerprint));
    return token + "=" + hex;
}

}  // namespace hetpu
