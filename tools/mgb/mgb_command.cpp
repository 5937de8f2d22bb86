// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu mgb status|reset`: what the node-wide MGB arbiter holds, read from its shared
// segment under its lock (a consistent snapshot), without registering as a user of it.
#include "tools/mgb/mgb_command.h"

#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "node_arbiter/node_arbiter.h"
#include "common/cli_args.h"
#include "sched_policies/mgb/core/gpu_ledger.h"

namespace hetpu::mgb_cli {

namespace {

using hetpu::mgb::Grant;
using hetpu::mgb::kMaxDevices;
using hetpu::mgb::Ledger;
using hetpu::mgb::NodeArbiter;

std::string fixed_string(const char *field, size_t size)
{
    return std::string(field, strnlen(field, size));  // a field filled to the brim has no NUL
}

bool pid_alive(int32_t pid)
{
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno != ESRCH);  // EPERM: alive, not ours
}

std::string human_bytes(uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    unsigned u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof *units) {
        v /= 1024;
        ++u;
    }
    char text[32];
    std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return text;
}

// One process's share of one device.
struct Share {
    uint64_t bytes = 0;
    uint64_t warps = 0;
    unsigned grants = 0;
};
struct ProcessView {
    std::string policy;
    bool registered = false;  // false: only its grants are left (it never registered, or was dropped)
    uint32_t waiting = 0;
    std::map<unsigned, Share> shares;  // by device index
    // What its oldest waiting task needs where only memory holds it back (by device index).
    std::map<unsigned, uint64_t> memory_wait;
};

std::map<int32_t, ProcessView> processes_of(const Ledger &ledger)
{
    std::map<int32_t, ProcessView> out;
    for (const auto &p : ledger.processes)
        if (p.pid != 0) {
            ProcessView &v = out[p.pid];
            v.policy = fixed_string(p.policy, sizeof p.policy);
            v.registered = true;
            v.waiting = p.waiting;
            for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d)
                if (p.memory_wait_bytes[d] > 0)
                    v.memory_wait[d] = p.memory_wait_bytes[d];
        }
    for (const Grant &g : ledger.grants)
        if (g.id != 0) {
            Share &s = out[g.pid].shares[g.device];
            s.bytes += g.bytes;
            s.warps += g.warps;
            ++s.grants;
        }
    return out;
}

std::string device_key(const Ledger &ledger, unsigned d)
{
    if (d >= ledger.ndevices || d >= kMaxDevices)
        return "device#" + std::to_string(d);
    return fixed_string(ledger.devices[d].key, sizeof ledger.devices[d].key);
}

double percent(uint64_t part, uint64_t whole) { return whole ? 100.0 * double(part) / double(whole) : 0.0; }

nlohmann::ordered_json status_json(const std::string &name, const Ledger &ledger)
{
    nlohmann::ordered_json j;
    j["arbiter"] = name;
    j["exists"] = true;
    j["devices"] = nlohmann::ordered_json::array();
    const unsigned ndevices = std::min<unsigned>(ledger.ndevices, kMaxDevices);
    for (unsigned d = 0; d < ndevices; ++d) {
        const auto &dev = ledger.devices[d];
        nlohmann::ordered_json jd;
        jd["index"] = d;
        jd["key"] = device_key(ledger, d);
        jd["name"] = fixed_string(dev.spec.name, sizeof dev.spec.name);
        jd["capacity_bytes"] = dev.capacity();
        jd["reserved_bytes"] = dev.reserved_bytes;
        jd["reserved_percent"] = percent(dev.reserved_bytes, dev.capacity());
        jd["in_use_warps"] = dev.in_use_warps;
        jd["max_warps"] = dev.spec.max_warps();
        jd["sms"] = dev.spec.sms;
        jd["tasks"] = dev.tasks;
        j["devices"].push_back(jd);
    }
    j["processes"] = nlohmann::ordered_json::array();
    for (const auto &[pid, v] : processes_of(ledger)) {
        nlohmann::ordered_json jp;
        jp["pid"] = pid;
        jp["policy"] = v.policy;
        jp["registered"] = v.registered;
        jp["alive"] = pid_alive(pid);
        jp["waiting"] = v.waiting;
        jp["devices"] = nlohmann::ordered_json::array();
        for (const auto &[d, s] : v.shares)
            jp["devices"].push_back(
                {{"key", device_key(ledger, d)}, {"reserved_bytes", s.bytes}, {"warps", s.warps}, {"tasks", s.grants}});
        jp["memory_wait"] = nlohmann::ordered_json::array();
        for (const auto &[d, bytes] : v.memory_wait)
            jp["memory_wait"].push_back({{"key", device_key(ledger, d)}, {"bytes", bytes}});
        j["processes"].push_back(jp);
    }
    return j;
}

void print_status_text(const std::string &name, const Ledger &ledger)
{
    const auto procs = processes_of(ledger);
    unsigned tasks = 0;
    const unsigned ndevices = std::min<unsigned>(ledger.ndevices, kMaxDevices);
    for (unsigned d = 0; d < ndevices; ++d)
        tasks += ledger.devices[d].tasks;
    std::printf("MGB arbiter %s: %u device(s), %zu process(es), %u task(s) placed\n", name.c_str(), ndevices,
                procs.size(), tasks);
    std::printf("devices:\n");
    if (ndevices == 0)
        std::printf("  (none registered yet)\n");
    for (unsigned d = 0; d < ndevices; ++d) {
        const auto &dev = ledger.devices[d];
        std::printf("  %u  %-24s %-16s capacity %-10s reserved %s (%.1f%%)  warps in use %llu/%llu  tasks %u\n", d,
                    device_key(ledger, d).c_str(), fixed_string(dev.spec.name, sizeof dev.spec.name).c_str(),
                    human_bytes(dev.capacity()).c_str(), human_bytes(dev.reserved_bytes).c_str(),
                    percent(dev.reserved_bytes, dev.capacity()), (unsigned long long)dev.in_use_warps,
                    (unsigned long long)dev.spec.max_warps(), dev.tasks);
    }
    std::printf("processes:\n");
    if (procs.empty())
        std::printf("  (none)\n");
    for (const auto &[pid, v] : procs) {
        std::printf("  pid %-8d %-10s %-6s waiting %u%s\n", int(pid), v.registered ? v.policy.c_str() : "?",
                    pid_alive(pid) ? "alive" : "DEAD", v.waiting, v.registered ? "" : "  (not registered)");
        for (const auto &[d, s] : v.shares)
            std::printf("    %-24s reserved %-10s warps %llu  tasks %u\n", device_key(ledger, d).c_str(),
                        human_bytes(s.bytes).c_str(), (unsigned long long)s.warps, s.grants);
        for (const auto &[d, bytes] : v.memory_wait)
            std::printf("    %-24s its oldest waiting task needs %s of memory here\n", device_key(ledger, d).c_str(),
                        human_bytes(bytes).c_str());
    }
}

int status(const std::string &name, bool json)
{
    if (!NodeArbiter::exists(name)) {
        const std::string text = "no MGB arbiter on this node: segment " + name +
                                 " does not exist (no mgb process has run, or HETPU_MGB_ARBITER=off)";
        if (json) {
            nlohmann::ordered_json j = {{"arbiter", name},
                                        {"exists", false},
                                        {"message", text},
                                        {"devices", nlohmann::ordered_json::array()},
                                        {"processes", nlohmann::ordered_json::array()}};
            std::printf("%s\n", j.dump(2).c_str());
        } else {
            std::printf("%s\n", text.c_str());
        }
        return 0;
    }
    std::unique_ptr<NodeArbiter> arbiter;
    try {
        arbiter = NodeArbiter::open_existing(name);
    } catch (const std::runtime_error &e) {
        const std::string error = e.what();
        if (json) {
            nlohmann::ordered_json j = {{"arbiter", name},
                                        {"exists", true},
                                        {"error", error},
                                        {"devices", nlohmann::ordered_json::array()},
                                        {"processes", nlohmann::ordered_json::array()}};
            std::printf("%s\n", j.dump(2).c_str());
        }
        std::fprintf(stderr, "hetpu mgb status: %s\n", error.c_str());
        return 1;
    }
    // Copied under the lock, printed after it: the lock is held for a memcpy, not for I/O.
    auto snapshot = std::make_unique<Ledger>();
    bool copied = false;
    arbiter->with_ledger([&](Ledger &ledger) {
        *snapshot = ledger;
        copied = true;
    });
    if (!copied) {  // the reason is on stderr already (lock held too long, ...)
        std::fprintf(stderr, "hetpu mgb status: could not read %s (is a process holding its lock stopped?)\n",
                     name.c_str());
        return 1;
    }
    if (json)
        std::printf(
            "%s\n",
            status_json(name, *snapshot).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    else
        print_status_text(name, *snapshot);
    return 0;
}

int reset(const std::string &name, bool force)
{
    if (!NodeArbiter::exists(name)) {
        std::printf("no MGB arbiter segment %s: nothing to reset\n", name.c_str());
        return 0;
    }
    // Processes that have it mapped keep using the old segment while new ones create a new
    // one: two arbiters that each think they own the GPUs. Refuse unless told otherwise.
    std::unique_ptr<NodeArbiter> arbiter;
    try {
        arbiter = NodeArbiter::open_existing(name);
    } catch (const std::runtime_error &) {
        // a segment of another layout or a broken one, which is what reset is for
    }
    if (arbiter) {
        std::vector<int32_t> live;
        arbiter->with_ledger([&](Ledger &ledger) {
            for (const auto &p : ledger.processes)
                if (p.pid != 0 && pid_alive(p.pid))
                    live.push_back(p.pid);
        });
        if (!live.empty() && !force) {
            std::string pids;
            for (int32_t pid : live)
                pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
            std::fprintf(stderr,
                         "hetpu mgb reset: %zu live process(es) use %s (pid %s): they would keep the old ledger "
                         "while new processes start a new one; stop them first, or use --force\n",
                         live.size(), name.c_str(), pids.c_str());
            return 1;
        }
    }
    if (!NodeArbiter::unlink(name)) {
        std::fprintf(stderr, "hetpu mgb reset: cannot remove %s: %s\n", name.c_str(), std::strerror(errno));
        return 1;
    }
    std::printf("removed MGB arbiter segment %s\n", name.c_str());
    return 0;
}

}  // namespace

int mgb_command(int argc, char **argv)
{
    CLI::App app{"The node-wide MGB arbiter: GPU memory and compute reserved by every mgb process of this user.",
                 "hetpu mgb"};
    app.require_subcommand(1);
    std::string arbiter;
    bool json = false;
    bool force = false;
    const std::string arbiter_help =
        "segment name (default: $HETPU_MGB_ARBITER, else /hetpu-mgb-<uid>: " + NodeArbiter::default_name() + ")";
    CLI::App *st = app.add_subcommand("status", "devices, reservations and processes of the arbiter");
    st->add_flag("--json", json, "one JSON object instead of text");
    st->add_option("--arbiter", arbiter, arbiter_help);
    CLI::App *rs = app.add_subcommand("reset", "remove the arbiter's segment (refused while live processes use it)");
    rs->add_option("--arbiter", arbiter, arbiter_help);
    rs->add_flag("--force", force, "remove it even while live processes use it");

    if (const auto rc = hetpu::cli::parse_args(app, argc, argv))
        return *rc;
    try {
        const std::string name = NodeArbiter::normalize_name(arbiter.empty() ? NodeArbiter::default_name() : arbiter);
        if (st->parsed())
            return status(name, json);
        return reset(name, force);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu mgb: %s\n", e.what());
        return 1;
    }
}

}  // namespace hetpu::mgb_cli
