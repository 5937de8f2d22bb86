// SPDX-License-Identifier: LGPL-2.1-or-later
// A trace of the arbiter's decisions: one JSON object per line (HETPU_MGB_TRACE=path), for
// plots of node-wide device occupancy over time and for checking that no device was ever
// overcommitted. Several processes may append to the same file: it is opened with
// O_APPEND and every line goes out in a single write(), so lines never interleave.
//
//   {"t":1718000000.123456,"event":"grant","pid":4242,"device":"cuda:0000:3b:00.0",
//    "bytes":1048576,"warps":640,"reserved_bytes":3145728,"capacity":17179869184,"policy":"mgb"}
//
// "reserved_bytes" is the node-wide reservation on that device after the event.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "node_arbiter/core/device_ledger.h"

namespace hetpu::mgb {

enum class TraceEvent { Grant, Release, Refuse };
const char *trace_event_name(TraceEvent event);  // "grant", "release", "refuse"

struct TraceRecord {
    TraceEvent event = TraceEvent::Grant;
    int32_t pid = 0;
    std::string device;  // device key
    uint64_t bytes = 0;  // of the task granted, released or refused
    uint64_t warps = 0;
    uint64_t reserved_bytes = 0;  // node-wide on that device, after the event
    uint64_t capacity = 0;
    std::string policy;
    double t = 0;  // seconds since the epoch; 0: stamped when written
};

// A record filled from the ledger as it stands after the event (device key, reservation,
// capacity). device out of range: key empty, reservation and capacity 0 (a refusal that
// names no device).
TraceRecord trace_record(const Ledger &ledger, TraceEvent event, int device, int32_t pid, uint64_t bytes,
                         uint64_t warps, std::string_view policy);

class GrantTrace {
public:
    // Opens path for appending (created 0644 when missing). Throws std::runtime_error.
    static std::unique_ptr<GrantTrace> open(const std::string &path);
    // HETPU_MGB_TRACE: nullptr when unset or empty, else as open().
    static std::unique_ptr<GrantTrace> from_environment();
    ~GrantTrace();
    GrantTrace(const GrantTrace &) = delete;
    GrantTrace &operator=(const GrantTrace &) = delete;

    // Appends one line. Thread-safe; never throws. False when the write failed (reported on
    // stderr once, not on every line).
    bool write(const TraceRecord &record);
    const std::string &path() const { return path_; }

    // The line write() appends, without the newline (for tests and other writers).
    static std::string to_json(const TraceRecord &record);

private:
    GrantTrace(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    std::string path_;
    int fd_;
    std::mutex mutex_;
    bool reported_failure_ = false;
};

}  // namespace hetpu::mgb
