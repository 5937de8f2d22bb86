// SPDX-License-Identifier: LGPL-2.1-or-later
// The arbiter's JSON-lines trace (see grant_trace.h).
#include "common/settings.h"
#include "node_arbiter/grant_trace.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace hetpu::mgb {

const char *trace_event_name(TraceEvent event)
{
    switch (event) {
    case TraceEvent::Grant: return "grant";
    case TraceEvent::Release: return "release";
    case TraceEvent::Refuse: return "refuse";
    }
    return "unknown";
}

TraceRecord trace_record(const Ledger &ledger, TraceEvent event, int device, int32_t pid, uint64_t bytes,
                         uint64_t warps, std::string_view policy)
{
    TraceRecord r;
    r.event = event;
    r.pid = pid;
    r.bytes = bytes;
    r.warps = warps;
    r.policy = std::string(policy);
    if (device >= 0 && unsigned(device) < ledger.ndevices && unsigned(device) < kMaxDevices) {
        const DeviceState &d = ledger.devices[device];
        r.device = std::string(d.key, strnlen(d.key, sizeof d.key));  // a key that fills the field has no NUL
        r.reserved_bytes = d.reserved_bytes;
        r.capacity = d.capacity();
    }
    return r;
}

namespace {

double now_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

std::string GrantTrace::to_json(const TraceRecord &record)
{
    // Field order as documented (ordered_json): the lines are read by people too.
    nlohmann::ordered_json j;
    j["t"] = record.t != 0 ? record.t : now_seconds();  // nlohmann prints doubles round-trip exact
    j["event"] = trace_event_name(record.event);
    j["pid"] = record.pid;
    j["device"] = record.device;
    j["bytes"] = record.bytes;
    j["warps"] = record.warps;
    j["reserved_bytes"] = record.reserved_bytes;
    j["capacity"] = record.capacity;
    j["policy"] = record.policy;
    // A device name from a driver is not guaranteed UTF-8: replace, never throw.
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::unique_ptr<GrantTrace> GrantTrace::open(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot open MGB trace " + path + ": " + std::strerror(errno));
    return std::unique_ptr<GrantTrace>(new GrantTrace(path, fd));
}

std::unique_ptr<GrantTrace> GrantTrace::from_environment()
{
    const std::optional<std::string> path = Settings().text("HETPU_MGB_TRACE");
    return path ? open(*path) : nullptr;
}

GrantTrace::~GrantTrace() { ::close(fd_); }

bool GrantTrace::write(const TraceRecord &record)
{
    try {
        const std::string line = to_json(record) + "\n";
        std::lock_guard<std::mutex> lock(mutex_);
        // One write() per line: with O_APPEND, Linux appends a regular-file write as a whole
        // (under the inode lock), so concurrent writers never split each other's lines. The
        // loop only matters for a short write (disk full), where the line is lost anyway.
        size_t done = 0;
        while (done < line.size()) {
            const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                if (!reported_failure_)
                    std::fprintf(stderr, "hetpu: MGB trace %s: write failed: %s (further failures not reported)\n",
                                 path_.c_str(), n < 0 ? std::strerror(errno) : "no progress");
                reported_failure_ = true;
                return false;
            }
            done += size_t(n);
        }
        return true;
    } catch (const std::exception &e) {  // bad_alloc: the trace is not worth a crash
        std::lock_guard<std::mutex> lock(mutex_);
        if (!reported_failure_)
            std::fprintf(stderr, "hetpu: MGB trace %s: %s\n", path_.c_str(), e.what());
        reported_failure_ = true;
        return false;
    }
}

}  // namespace hetpu::mgb
