// SPDX-License-Identifier: LGPL-2.1-or-later
// Output the user asked for (--json lines, the summary on stdout) that cannot be written is
// an error, not a silent loss: a full disk used to leave an empty --json file and exit 0,
// because the error surfaced at fflush (unchecked) and fclose then had nothing left to fail.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace hetpu::apps {

// Appends `line` and a newline, flushed so that a run killed later keeps it. Returns 0 or
// the errno of the failed write (the FILE's error flag stays set, so close_output sees it).
inline int append_line(std::FILE *f, const std::string &line)
{
    errno = 0;
    if (std::fprintf(f, "%s\n", line.c_str()) < 0 || std::fflush(f) != 0)
        return errno ? errno : EIO;
    return 0;
}

// Flushes and closes `f` (stdout is flushed, not closed). Returns 0, or prints
// "<program>: writing <what> failed: <reason>" and returns the errno. `first_error` is
// an errno already met by append_line on this stream (0 if none).
inline int close_output(std::FILE *f, const char *program, const std::string &what, int first_error = 0)
{
    errno = 0;
    int err = first_error;
    if (std::fflush(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (std::ferror(f) && !err)
        err = EIO;
    if (f != stdout && std::fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (err)
        std::fprintf(stderr, "%s: writing %s failed: %s\n", program, what.c_str(), std::strerror(err));
    return err;
}

// Writes `data` to path.tmp, then renames it to path: a failed or interrupted write never
// leaves a file that looks complete. Returns false with `error` naming the file and reason.
inline bool write_file_atomically(const std::string &path, const std::string &data, std::string &error)
{
    const std::string tmp = path + ".tmp";
    std::FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) {
        error = "cannot create '" + tmp + "': " + std::strerror(errno);
        return false;
    }
    bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "writing '" + path + "' failed: " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace hetpu::apps
