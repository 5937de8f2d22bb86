// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/file_fingerprint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace hetpu;

namespace {

std::string write_temp(const std::string &bytes)
{
    char path[] = "/tmp/hetpu-fingerprint-XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    return path;
}

uint64_t fingerprint_of(const std::string &path)
{
    uint64_t f = 0;
    std::string error;
    EXPECT_TRUE(file_fingerprint(path, f, error)) << error;
    return f;
}

}  // namespace

TEST(FileFingerprint, SameBytesSameFingerprintOneByteChangesIt)
{
    const std::string a = write_temp("x,y\n1,2\n3,4\n"), b = write_temp("x,y\n1,2\n3,4\n"),
                      c = write_temp("x,y\n1,2\n3,5\n");
    EXPECT_EQ(fingerprint_of(a), fingerprint_of(b));
    EXPECT_NE(fingerprint_of(a), fingerprint_of(c));
    // FNV-1a 64 of nothing is its offset basis.
    const std::string empty = write_temp("");
    EXPECT_EQ(fingerprint_of(empty), 14695981039346656037ull);
    for (const std::string &p : {a, b, c, empty})
        std::remove(p.c_str());
}

TEST(FileFingerprint, AnUnreadableFileIsNamed)
{
    uint64_t f = 0;
    std::string error;
    EXPECT_FALSE(file_fingerprint("/nonexistent/points.bin", f, error));
    EXPECT_NE(error.find("/nonexistent/points.bin: "), std::string::npos);
}

TEST(FileFingerprint, TheTokenStaysOneToken)
{
    EXPECT_EQ(data_token("/data/my points%.bin", 0xab), "data:/data/my%20points%25.bin=00000000000000ab");
}
