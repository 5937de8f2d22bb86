// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/disk_tier.h"

#include "ckpt_backend/core/ckpt_error.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hetpu::ckpt {

namespace {

void check_dir(const std::string &dir, const char *what)
{
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) {
        int err = errno;
        throw Error(-err, std::string(what) + " directory '" + dir + "': " + std::strerror(err) +
                              " (create it or fix the path in the config)");
    }
    if (!S_ISDIR(st.st_mode))
        throw Error(-ENOTDIR, std::string(what) + " path '" + dir + "' is not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
        int err = errno;
        throw Error(-err, std::string(what) + " directory '" + dir + "' is not writable: " + std::strerror(err));
    }
}

// Temporary files of a writer that died (the pid in their name is gone) are garbage: the
// rename that would have published them never happened.
void sweep_dead_temporaries(const std::string &dir)
{
    DIR *d = ::opendir(dir.c_str());
    if (!d)
        return;
    while (struct dirent *e = ::readdir(d)) {
        const std::string f = e->d_name;
        const std::size_t at = f.rfind(".tmp.");
        if (f.empty() || f[0] != '.' || at == std::string::npos)
            continue;
        const long pid = std::strtol(f.c_str() + at + 5, nullptr, 10);
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            ::unlinkat(::dirfd(d), f.c_str(), 0);
    }
    ::closedir(d);
}

// One run per checkpoint directory: a second process sweeping, renaming and pruning the
// same versions corrupted the first one's (seen: "cannot rename into place"). An flock on a
// file inside the directory is held for the engine's life; the kernel drops it when the
// process dies, so a crash never leaves the directory locked. The file holds the holder's
// PID for the refusal message.
int lock_directory(const std::string &dir)
{
    const std::string path = dir + "/.hetpu-ckpt.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int err = errno;
        throw Error(-err, "cannot create the lock file '" + path + "': " + std::strerror(err));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        char buf[32] = {};
        const ssize_t n = err == EWOULDBLOCK ? ::pread(fd, buf, sizeof buf - 1, 0) : 0;
        ::close(fd);
        if (err != EWOULDBLOCK)
            throw Error(-err, "cannot lock '" + path + "': " + std::strerror(err));
        const long pid = n > 0 ? std::strtol(buf, nullptr, 10) : 0;
        // A PID is missing only in the instant between the holder's lock and its write.
        throw Error(-EBUSY, "checkpoint directory '" + dir + "' is in use by " +
                                (pid > 0 ? "process " + std::to_string(pid) : std::string("another process")) +
                                " (it holds " + path +
                                "): give each run its own directory, or wait for that run to end");
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    // Best effort: the lock protects the directory whether or not the PID lands.
    const bool pid_written =
        ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
    (void)pid_written;
    return fd;
}

}  // namespace

DiskTier::DiskTier(std::string label, std::string dir, WriteOptions options, std::uint64_t bandwidth)
    : label_(std::move(label)), dir_(std::move(dir)), options_(std::move(options)), bandwidth_(bandwidth)
{}

DiskTier::~DiskTier()
{
    if (lock_fd_ >= 0)
        ::close(lock_fd_);  // releases the directory for the next run
}

void DiskTier::open(bool exclusive)
{
    check_dir(dir_, label_.c_str());
    if (exclusive)
        lock_fd_ = lock_directory(dir_);
    sweep_dead_temporaries(dir_);
}

void DiskTier::write_region(const std::string &file, const void *data, std::uint64_t size) const
{
    write_file_durably(dir_, file, data, size, options_);
}

void DiskTier::throttle(std::uint64_t bytes, std::chrono::steady_clock::time_point since) const
{
    if (bandwidth_ == 0)
        return;
    const std::chrono::duration<double> due(static_cast<double>(bytes) / static_cast<double>(bandwidth_));
    std::this_thread::sleep_until(since + std::chrono::duration_cast<std::chrono::steady_clock::duration>(due));
}

void DiskTier::copy_version(const DiskTier &from, const Manifest &m) const
{
    std::vector<char> buf;
    const auto started = std::chrono::steady_clock::now();
    std::uint64_t copied = 0;
    for (std::size_t i = 0; i < m.regions.size(); ++i) {
        buf.resize(m.regions[i].size);
        read_region(from.dir(), m, i, buf.data());
        write_file_durably(dir_, m.regions[i].file, buf.data(), buf.size(), options_);
        throttle(copied += buf.size(), started);
    }
    write_manifest(dir_, m, options_);
}

void DiskTier::apply_retention(const std::string &name, int keep,
                               const std::function<bool(std::int64_t)> &still_needed) const
{
    if (keep <= 0)
        return;
    const std::vector<std::int64_t> complete = complete_versions(dir_, name, false);
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < complete.size(); ++i) {
        if (still_needed(complete[i]))
            continue;
        try {
            remove_version(dir_, name, complete[i]);
        } catch (const Error &) {
            // Retention is housekeeping: the version is pruned again on the next pass.
        }
    }
}

void DiskTier::remove_orphans(const std::string &name) const
{
    for (std::int64_t orphan : orphan_versions(dir_, name)) {
        try {
            remove_version(dir_, name, orphan);
        } catch (const Error &) {
            // Housekeeping: an orphan left here is retried at the next start.
        }
    }
}

}  // namespace hetpu::ckpt
