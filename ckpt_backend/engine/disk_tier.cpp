// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/disk_tier.h"

#include "ckpt_backend/core/ckpt_error.h"
#include "ckpt_backend/engine/chain.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
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

DiskTier::DiskTier(std::string label, std::string dir, WriteOptions options, std::uint64_t bandwidth, Level level)
    : Tier(level, std::move(label)), dir_(std::move(dir)), options_(std::move(options)), bandwidth_(bandwidth)
{}

DiskTier::~DiskTier()
{
    if (lock_fd_ >= 0)
        ::close(lock_fd_);  // releases the directory for the next run
}

void DiskTier::open(bool exclusive)
{
    check_dir(dir_, label().c_str());
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

void DiskTier::copy_version(const Tier &from, const Manifest &m) const
{
    std::vector<char> buf;
    const auto started = std::chrono::steady_clock::now();
    std::uint64_t copied = 0;
    for (std::size_t i = 0; i < m.regions.size(); ++i) {
        buf.resize(m.regions[i].size);
        from.read_stored(m, i, buf.data());
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

// ---------------------------------------------------------------------------------------
// In the chain

void DiskTier::attach(Chain &chain, std::size_t position)
{
    chain_ = &chain;
    position_ = position;
    const bool first = position == chain.first_durable();
    if (first) {
        // Concurrency control (seed, HiPC'22, applied to flushes): the flush into the first
        // directory steps aside between 256 KiB chunks while the application is copying a
        // checkpoint in, so the copy that blocks the application gets the memory bandwidth.
        options_.between_chunks = [&chain] { chain.step_aside_for_captures(); };
    }
    open(first);
    if (position > 0)
        if (const auto *from = dynamic_cast<const DiskTier *>(&chain.tier(position - 1)))
            catch_up(*from);
}

void DiskTier::start(std::vector<std::thread> &threads)
{
    if (position_ == 0 || !chain_->tier(position_ - 1).durable())
        return;  // regions reach this tier through accept(), from the tier before's threads
    for (int i = 0; i < chain_->config().flush_threads; ++i)
        threads.emplace_back(&DiskTier::copy_loop, this);
}

void DiskTier::accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached)
{
    const Key &key = rk.first;
    std::unique_lock<std::mutex> lock(chain_->mu);
    const std::uint64_t size = chain_->begun_locked(rk).regions[rk.second].size;
    lock.unlock();
    std::uint64_t sum = 0;
    std::optional<Error> failed;
    try {
        sum = chain_->config().checksums ? checksum_of(src, size, options_.between_chunks) : 0;
        write_region(region_file_name(key.first, key.second, rk.second), src, size);
    } catch (const Error &e) {
        failed = e;  // recorded on the version first: wait() and drain() report it too
    }
    lock.lock();
    Version *v = &chain_->versions.at(key);
    v->regions[rk.second].checksum = sum;
    chain_->reached_locked(lock, rk, position_);
    if (on_reached)
        (*on_reached)(!failed);
    if (failed)
        chain_->record_error_locked(*v, *failed);
    if (v->reached[position_] == v->regions.size() && !v->error) {
        // The version's last region: its manifest makes it a complete version here.
        const Manifest m = Chain::manifest_of(key, *v);
        lock.unlock();
        try {
            write_manifest(dir_, m, options_);
        } catch (const Error &e) {
            failed = e;
        }
        // Retention here waits for the copy to the next tier, when one copies from here.
        const bool copied_on = position_ + 1 < chain_->size() && chain_->tier(position_ + 1).durable();
        if (!failed && !copied_on)
            apply_retention(key.first);
        lock.lock();
        v = &chain_->versions.at(key);
        if (failed)
            chain_->record_error_locked(*v, *failed);
        else
            chain_->complete_locked(key, *v, position_);
    }
    lock.unlock();
    chain_->notify_state();
    if (failed)
        throw *failed;
}

void DiskTier::upstream_complete_locked(const Key &key)
{
    copies_.push_locked(key);
    copies_.wake_one();
}

// True while this tier still needs the version from the tier before: it is not here, and its
// copy is pending. Not pending: the copy finished (and this tier's retention may have pruned
// it since) or failed. A version this process never queued here (known from a manifest only)
// is pending only when this tier has nothing newer, i.e. it may still be copied.
bool DiskTier::needs_upstream(const Key &key) const
{
    if (try_read_manifest(dir_, key.first, key.second))
        return false;
    {
        std::lock_guard<std::mutex> lock(chain_->mu);
        auto it = chain_->versions.find(key);
        if (it != chain_->versions.end() && (it->second.declared_in_memory || it->second.copy_queued))
            return !(it->second.complete_on(position_) || it->second.error != 0);
    }
    const std::vector<std::int64_t> here = complete_versions(dir_, key.first, false);
    return !(!here.empty() && key.second < here.front());
}

void DiskTier::apply_retention(const std::string &name)
{
    // A version still waiting for its copy to the next tier must stay: the copy reads it.
    // "Not on the next tier" alone does not say that: the next tier's own retention may
    // already have removed it there (a later version landed first), and testing only its
    // manifest would keep such a version here for good.
    const bool has_next = position_ + 1 < chain_->size();
    apply_retention(name, chain_->config().versions_to_keep, [&](std::int64_t version) {
        return has_next && chain_->tier(position_ + 1).needs_upstream({name, version});
    });
}

std::optional<Manifest> DiskTier::find_manifest(const Key &key) const
{
    return try_read_manifest(dir_, key.first, key.second);
}

std::optional<std::int64_t> DiskTier::newest_complete(const std::string &name) const
{
    return latest_complete(dir_, name, false);
}

void DiskTier::read_stored(const Manifest &m, std::size_t index, void *dst) const { read_region(dir_, m, index, dst); }

void DiskTier::catch_up(const DiskTier &from)
{
    const std::size_t keep = static_cast<std::size_t>(std::max(chain_->config().versions_to_keep, 0));
    for (const std::string &name : checkpoint_names(from.dir())) {
        from.remove_orphans(name);
        remove_orphans(name);
        const std::vector<std::int64_t> there = complete_versions(from.dir(), name, false);
        const std::vector<std::int64_t> here = complete_versions(dir_, name, false);
        // What this tier keeps once caught up: the newest versions over both tiers.
        std::vector<std::int64_t> both;
        std::set_union(there.begin(), there.end(), here.begin(), here.end(), std::back_inserter(both));
        const std::int64_t oldest_kept = keep == 0 || both.size() <= keep ? INT64_MIN : both[both.size() - keep];
        {
            std::lock_guard<std::mutex> lock(chain_->mu);
            for (auto v = there.rbegin(); v != there.rend() && *v >= oldest_kept; ++v) {
                if (std::binary_search(here.begin(), here.end(), *v))
                    continue;
                Version *known = chain_->find_locked({name, *v}, true);
                if (!known)
                    continue;  // removed since the scan
                known->copy_queued = true;
                copies_.push_locked({name, *v});
            }
        }
        apply_retention(name);
        chain_->tier(position_ - 1).apply_retention(name);
    }
}

void DiskTier::copy_loop()
{
    lower_this_thread_priority();
    const Tier &from = chain_->tier(position_ - 1);
    std::unique_lock<std::mutex> lock(chain_->mu);
    for (;;) {
        const std::optional<Key> item = copies_.take_locked(lock, chain_->stopping);
        if (!item)
            return;
        const Key key = *item;
        Manifest m = Chain::manifest_of(key, chain_->versions.at(key));
        m.checksums = chain_->config().checksums;
        lock.unlock();
        std::optional<Error> failed;
        try {
            copy_version(from, m);
        } catch (const Error &e) {
            failed = e;
        }
        if (!failed) {
            apply_retention(key.first);
            chain_->tier(position_ - 1).apply_retention(key.first);
        }
        lock.lock();
        Version &v = chain_->versions.at(key);
        if (failed)
            chain_->record_error_locked(v, *failed);
        else
            chain_->complete_locked(key, v, position_);
        copies_.done_locked();
        lock.unlock();
        chain_->notify_state();
        lock.lock();
    }
}

}  // namespace hetpu::ckpt
