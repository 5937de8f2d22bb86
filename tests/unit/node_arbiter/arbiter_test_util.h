// SPDX-License-Identifier: LGPL-2.1-or-later
// Helpers of the arbiter tests: unique segment names, forked children, and pipes to
// synchronise with them. Nothing here sleeps: every wait is on a pipe or on waitpid, so the
// tests hold on a loaded machine.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>

#include "node_arbiter/node_arbiter.h"
#include "sched_policies/mgb/core/gpu_ledger.h"

namespace hetpu::mgb::test {

inline GpuSpec small_gpu(uint64_t bytes = uint64_t(1) << 30)
{
    GpuSpec s;
    set_spec_name(s, "test-gpu");
    s.memory_bytes = bytes;
    s.sms = 4;
    s.max_warps_per_sm = 64;
    s.max_blocks_per_sm = 32;
    s.shared_mem_per_sm = 0;
    s.warp_size = 32;
    return s;
}

// Adds (or finds) device `key` and places a small task of `bytes` on it for pid, by Alg. 3.
// Returns the grant id, 0 when it was not placed.
inline uint64_t place_on(Ledger &ledger, const char *key, uint64_t bytes, int32_t pid)
{
    if (ledger_add_device(ledger, key, small_gpu()) < 0)
        return 0;
    PlaceRequest r;
    r.needs.bytes = bytes;
    r.needs.blocks = 2;
    r.needs.threads_per_block = 64;
    r.pid = pid;
    const PlaceResult res = ledger_place(ledger, Algorithm::LeastWarps, r);
    return res.status == PlaceStatus::Placed ? res.grant : 0;
}

inline unsigned grants_of(const Ledger &ledger, int32_t pid)
{
    unsigned n = 0;
    for (const Grant &g : ledger.grants)
        n += g.id != 0 && g.pid == pid;
    return n;
}

inline unsigned live_grants(const Ledger &ledger)
{
    unsigned n = 0;
    for (const Grant &g : ledger.grants)
        n += g.id != 0;
    return n;
}

inline bool registered(const Ledger &ledger, int32_t pid)
{
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid == pid)
            return true;
    return false;
}

inline unsigned registered_count(const Ledger &ledger)
{
    unsigned n = 0;
    for (const ProcessEntry &p : ledger.processes)
        n += p.pid != 0;
    return n;
}

// "/hetpu-mgb-test-<pid>-<n>", unlinked before use and when the test ends.
class ScopedSegmentName {
public:
    ScopedSegmentName()
    {
        static std::atomic<unsigned> counter{0};
        name_ = "/hetpu-mgb-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
        NodeArbiter::unlink(name_);
    }
    ~ScopedSegmentName() { NodeArbiter::unlink(name_); }
    const std::string &str() const { return name_; }

private:
    std::string name_;
};

class Pipe {
public:
    Pipe()
    {
        if (::pipe(fd_) != 0)
            fd_[0] = fd_[1] = -1;
    }
    ~Pipe()
    {
        close_read();
        close_write();
    }
    bool ok() const { return fd_[0] >= 0; }
    void close_read() { close_fd(fd_[0]); }
    void close_write() { close_fd(fd_[1]); }
    bool send(char c = 'x')
    {
        for (;;) {
            const ssize_t n = ::write(fd_[1], &c, 1);
            if (n == 1)
                return true;
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
    }
    // Blocks for one byte; false on end of file (every writer closed its end).
    bool receive(char *c = nullptr)
    {
        char tmp;
        for (;;) {
            const ssize_t n = ::read(fd_[0], &tmp, 1);
            if (n == 1) {
                if (c)
                    *c = tmp;
                return true;
            }
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
    }

private:
    static void close_fd(int &fd)
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
    int fd_[2];
};

// A forked child running fn() and exiting with its return value (99 on an exception). The
// child never returns into gtest. Killed and reaped on destruction if the test did not
// wait for it (a failing assertion must not leave it running).
class Child {
public:
    template <typename Fn> explicit Child(Fn &&fn)
    {
        std::fflush(nullptr);  // buffered output must not be printed twice
        pid_ = fork();
        if (pid_ == 0) {
            int rc = 99;
            try {
                rc = fn();
            } catch (...) {
            }
            _exit(rc);
        }
    }
    ~Child()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            wait();
        }
    }
    pid_t pid() const { return pid_; }
    // Exit status, 128 + signal when killed, -1 on error.
    int wait()
    {
        if (pid_ <= 0)
            return -1;
        int status = 0;
        pid_t r;
        do
            r = waitpid(pid_, &status, 0);
        while (r < 0 && errno == EINTR);
        pid_ = -1;
        if (r < 0)
            return -1;
        if (WIFEXITED(status))
            return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
            return 128 + WTERMSIG(status);
        return -1;
    }
    void kill_and_wait(int sig = SIGKILL)
    {
        if (pid_ > 0)
            ::kill(pid_, sig);
        last_status_ = wait();
    }
    int last_status() const { return last_status_; }

private:
    pid_t pid_ = -1;
    int last_status_ = -1;
};

}  // namespace hetpu::mgb::test
