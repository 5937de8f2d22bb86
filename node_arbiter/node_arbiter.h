// SPDX-License-Identifier: LGPL-2.1-or-later
// The node-wide MGB arbiter: one Ledger in a POSIX shared-memory segment that every hetpu
// process of the same user on the node maps, guarded by a process-shared robust mutex.
// A process killed while holding the mutex (even by SIGKILL) never deadlocks the others:
// the next locker gets EOWNERDEAD, rebuilds the counters from the grants and reclaims the
// grants of every process that no longer exists.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "node_arbiter/ledger_access.h"

namespace hetpu::mgb {

class NodeArbiter final : public LedgerAccess {
public:
    // HETPU_MGB_ARBITER when set (and not "off"), else "/hetpu-mgb-<uid>".
    static std::string default_name();
    // True when HETPU_MGB_ARBITER=off (or 0/no/false).
    static bool disabled_by_environment();

    // Maps the segment, creating and initialising it if it does not exist (a concurrent
    // creator is waited for). Registers this process (pid, policy). Throws std::runtime_error
    // when the segment cannot be used (permissions, a segment of another layout version).
    static std::unique_ptr<NodeArbiter> open(const std::string &name, const std::string &policy);
    // Maps an existing segment for reading (hetpu mgb status); does not register a process.
    // Its with_ledger gives up (fn not run, logged) when the lock stays held for 3 s, and
    // reclaims dead processes only when it has to repair a dead holder's lock. Throws as open().
    static std::unique_ptr<NodeArbiter> open_existing(const std::string &name);
    // Maps the segment, creating it as open() does, without registering the process: for a
    // component that holds reservations beside the process's scheduler (the checkpoint
    // cache). Its destruction releases nothing (the owner releases its grants; a
    // dead process's grants are reclaimed by pid). Locks wait like open()'s. Throws as open().
    static std::unique_ptr<NodeArbiter> open_unregistered(const std::string &name);
    // Removes the segment's name (tests; processes that have it mapped keep working).
    static bool unlink(const std::string &name);
    // Whether a segment of that name exists (whatever its layout), for `hetpu mgb status`.
    static bool exists(const std::string &name);
    // name with a leading '/' added when missing (POSIX shared-memory names start with one).
    static std::string normalize_name(const std::string &name);

    ~NodeArbiter() override;  // releases this process's grants (if registered) and unmaps

    // fn is not run (and the reason is logged on stderr) when the lock cannot be taken: a
    // with_ledger nested inside fn (EDEADLK), or a reader's timeout. An exception from fn is
    // logged and swallowed, and the counters are rebuilt from the grants.
    void with_ledger(const std::function<void(Ledger &)> &fn) override;
    bool node_wide() const override { return true; }
    std::string describe() const override;
    const std::string &name() const { return name_; }

private:
    struct Segment;
    NodeArbiter(std::string name, Segment *segment, bool registered);
    void reclaim_dead_locked(bool full);
    std::string name_;
    Segment *segment_;
    bool registered_;
    bool blocking_lock_ = false;  // open_unregistered: waits for the lock like a registered process
    int32_t owner_pid_ = 0;       // the pid registered by open(); a forked child must not detach it
};

}  // namespace hetpu::mgb
