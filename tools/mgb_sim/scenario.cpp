// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/mgb_sim/scenario.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/input_file.h"
#include "common/json_path.h"
#include "sched_policies/mgb/core/gpu_ledger.h"

namespace hetpu::mgb_sim {

namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// A scenario is a batch of at most this many jobs: far beyond the paper's 128-job runs, and
// small enough that a typo ("repeat": 1e9) is an error instead of an endless simulation.
constexpr uint64_t kMaxJobs = 100000;
// Ranges that keep every sum and product of the simulation exact and finite (unchecked,
// 1e10 GiB jobs would wrap the byte counters, 1e300 s print makespans of 1e305). A PiB of
// device memory and a year per phase are far beyond any real job; 4096 live jobs of a PiB
// each still sum below 2^63 bytes.
constexpr double kMaxMemoryGiB = 1024.0 * 1024.0;  // 1 PiB
constexpr double kMaxSeconds = 365.0 * 24 * 3600;  // one year
constexpr double kMaxInterference = 100.0;
// Kernel launches (the simulator's events) in the whole batch: beyond this a run would take
// minutes, so it is refused instead of started.
constexpr uint64_t kMaxLaunches = 10000000;
// A scenario of the largest batch the launch cap allows stays well under this; a file past
// it (or a device such as /dev/zero) is refused before it fills memory.
constexpr uint64_t kMaxScenarioBytes = uint64_t{64} << 20;

[[noreturn]] void fail(const std::string &field, const std::string &problem, const std::string &fix)
{
    throw ScenarioError("scenario: " + field + ": " + problem + (fix.empty() ? "" : "; " + fix));
}

std::string shown(const json &v)
{
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

// The fields an object may have: anything else is almost always a misspelling, which would
// otherwise silently fall back to a default.
void check_keys(const json &obj, const std::string &where, const std::set<std::string> &known)
{
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        if (known.count(it.key()))
            continue;
        std::string list;
        for (const auto &k : known)
            list += (list.empty() ? "" : ", ") + k;
        fail(where + "." + it.key(), "unknown field", "the known fields are " + list);
    }
}

const json &need(const json &obj, const std::string &where, const char *key, const std::string &fix)
{
    if (!obj.contains(key))
        fail(where + "." + key, "missing", fix);
    return obj.at(key);
}

double number(const json &v, const std::string &field, const std::string &fix)
{
    if (!v.is_number())
        fail(field, "must be a number (got " + shown(v) + ")", fix);
    const double d = v.get<double>();
    if (!std::isfinite(d))
        fail(field, "must be finite", fix);
    return d;
}

double positive(const json &v, const std::string &field, const std::string &fix)
{
    const double d = number(v, field, fix);
    if (d <= 0)
        fail(field, "must be positive (got " + shown(v) + ")", fix);
    return d;
}

double non_negative(const json &v, const std::string &field, const std::string &fix)
{
    const double d = number(v, field, fix);
    if (d < 0)
        fail(field, "must not be negative (got " + shown(v) + ")", fix);
    return d;
}

std::string plain(double d)
{
    std::ostringstream out;
    out << std::setprecision(12) << d;
    return out.str();
}

double at_most(double d, double max, const json &v, const std::string &field, const std::string &fix)
{
    if (d > max)
        fail(field, "must be at most " + plain(max) + " (got " + shown(v) + ")", fix);
    return d;
}

uint64_t gib_to_bytes(const json &v, const std::string &field, const std::string &fix)
{
    const double gib = at_most(positive(v, field, fix), kMaxMemoryGiB, v, field, fix);
    const uint64_t bytes = uint64_t(std::llround(gib * kGiB));
    if (bytes == 0)
        fail(field, "is below one byte (got " + shown(v) + ")", fix);
    return bytes;
}

double seconds(const json &v, const std::string &field, const std::string &fix, bool zero_ok)
{
    const double d = zero_ok ? non_negative(v, field, fix) : positive(v, field, fix);
    return at_most(d, kMaxSeconds, v, field, fix);
}

uint32_t count(const json &v, const std::string &field, uint64_t min, uint64_t max, const std::string &fix)
{
    if (!v.is_number_integer() && !v.is_number_unsigned())
        fail(field, "must be a whole number (got " + shown(v) + ")", fix);
    if (v.is_number_integer() && v.get<int64_t>() < int64_t(min))
        fail(field, "must be at least " + std::to_string(min) + " (got " + shown(v) + ")", fix);
    const uint64_t u = v.get<uint64_t>();
    if (u < min || u > max)
        fail(field, "must be in " + std::to_string(min) + ".." + std::to_string(max) + " (got " + shown(v) + ")", fix);
    return uint32_t(u);
}

mgb::GpuSpec parse_gpu(const json &g, const std::string &where)
{
    if (!g.is_object())
        fail(where, "must be an object", R"(write e.g. {"preset": "V100", "count": 4})");
    check_keys(g, where,
               {"preset", "name", "count", "memory_gib", "sms", "max_warps_per_sm", "max_blocks_per_sm",
                "shared_mem_per_sm_kib", "warp_size"});
    mgb::GpuSpec spec;
    bool from_preset = false;
    if (g.contains("preset")) {
        const json &p = g.at("preset");
        std::string names;
        for (const auto &n : mgb::gpu_preset_names())
            names += (names.empty() ? "" : ", ") + n;
        if (!p.is_string())
            fail(where + ".preset", "must be a string", "one of " + names);
        auto preset = mgb::gpu_preset(p.get<std::string>());
        if (!preset)
            fail(where + ".preset", "unknown GPU '" + p.get<std::string>() + "'", "one of " + names);
        spec = *preset;
        from_preset = true;
    }
    const char *explicit_fix = "give it, or name a \"preset\" (P100, V100, A100, H100)";
    if (g.contains("name")) {
        if (!g.at("name").is_string() || g.at("name").get<std::string>().empty())
            fail(where + ".name", "must be a non-empty string", "");
        mgb::set_spec_name(spec, g.at("name").get<std::string>());
    } else if (!from_preset) {
        fail(where + ".name", "missing", explicit_fix);
    }
    auto field = [&](const char *key) -> const json * {
        if (g.contains(key))
            return &g.at(key);
        if (!from_preset)
            fail(where + "." + key, "missing", explicit_fix);
        return nullptr;
    };
    if (const json *v = field("memory_gib"))
        spec.memory_bytes = gib_to_bytes(*v, where + ".memory_gib", "device memory in GiB, e.g. 16");
    if (const json *v = field("sms"))
        spec.sms = count(*v, where + ".sms", 1, mgb::kMaxSms, "streaming multiprocessors, e.g. 80 for a V100");
    if (const json *v = field("max_warps_per_sm"))
        spec.max_warps_per_sm = count(*v, where + ".max_warps_per_sm", 1, 65535, "64 on every NVIDIA GPU since Kepler");
    if (const json *v = field("max_blocks_per_sm"))
        spec.max_blocks_per_sm = count(*v, where + ".max_blocks_per_sm", 1, 255, "32 on Volta, Ampere and Hopper");
    if (g.contains("shared_mem_per_sm_kib"))
        spec.shared_mem_per_sm = uint32_t(std::llround(
            non_negative(g.at("shared_mem_per_sm_kib"), where + ".shared_mem_per_sm_kib", "KiB, 0: not limiting") *
            1024));
    if (g.contains("warp_size"))
        spec.warp_size = count(g.at("warp_size"), where + ".warp_size", 1, 1024, "32 on NVIDIA GPUs");
    try {
        mgb::check_spec(spec);
    } catch (const std::invalid_argument &e) {
        fail(where, e.what(), "");
    }
    return spec;
}

KernelSpec parse_kernel(const json &k, const std::string &where)
{
    if (!k.is_object())
        fail(where, "must be an object", R"(write e.g. {"blocks": 1000, "threads_per_block": 128, "seconds": 2.0})");
    check_keys(k, where,
               {"name", "blocks", "threads_per_block", "shared_mem_per_block", "seconds", "host_seconds", "repeat"});
    KernelSpec out;
    out.blocks = count(need(k, where, "blocks", "the kernel's grid size in thread blocks"), where + ".blocks", 1,
                       std::numeric_limits<uint32_t>::max(), "the kernel's grid size in thread blocks");
    out.threads_per_block = count(need(k, where, "threads_per_block", "threads per block, e.g. 256"),
                                  where + ".threads_per_block", 1, 1 << 20, "threads per block, e.g. 256");
    if (k.contains("shared_mem_per_block"))
        out.shared_mem_per_block = count(k.at("shared_mem_per_block"), where + ".shared_mem_per_block", 0,
                                         std::numeric_limits<uint32_t>::max(), "bytes of shared memory per block");
    out.seconds = seconds(need(k, where, "seconds", "the kernel's standalone run time in seconds"), where + ".seconds",
                          "the kernel's standalone run time in seconds", false);
    if (k.contains("host_seconds"))
        out.host_seconds =
            seconds(k.at("host_seconds"), where + ".host_seconds", "host seconds after each launch", true);
    if (k.contains("repeat"))
        out.repeat = count(k.at("repeat"), where + ".repeat", 1, 1000000, "launches in a row, at least 1");
    return out;
}

}  // namespace

MgbScenario parse_mgb_scenario(const std::string &json_text)
{
    json root;
    try {
        root = parse_json_with_fields(json_text);
    } catch (const JsonFieldError &e) {
        throw ScenarioError(std::string("scenario: not valid JSON, or a number no double holds: ") + e.what());
    }
    if (!root.is_object())
        fail("(top level)", "must be an object", R"(write {"gpus": [...], "workers": N, "jobs": [...]})");
    check_keys(root, "(top level)", {"gpus", "workers", "jobs", "noise", "interference", "colocation", "comment"});

    MgbScenario s;
    const json &gpus =
        need(root, "(top level)", "gpus", R"(list the devices, e.g. "gpus": [{"preset": "V100", "count": 4}])");
    if (!gpus.is_array() || gpus.empty())
        fail("gpus", "must be a non-empty array", R"(e.g. [{"preset": "V100", "count": 4}])");
    for (size_t i = 0; i < gpus.size(); ++i) {
        const std::string where = "gpus[" + std::to_string(i) + "]";
        const mgb::GpuSpec spec = parse_gpu(gpus[i], where);
        const uint32_t n = gpus[i].contains("count") ? count(gpus[i].at("count"), where + ".count", 1, mgb::kMaxDevices,
                                                             "how many such devices")
                                                     : 1;
        for (uint32_t c = 0; c < n; ++c)
            s.gpus.push_back(spec);
    }
    if (s.gpus.size() > mgb::kMaxDevices)
        fail("gpus", std::to_string(s.gpus.size()) + " devices in all", "at most " + std::to_string(mgb::kMaxDevices));

    s.workers = count(need(root, "(top level)", "workers", "the number of concurrent jobs, e.g. 16"), "workers", 1,
                      4096, "the number of concurrent jobs, e.g. 16");
    if (root.contains("noise")) {
        s.noise = non_negative(root.at("noise"), "noise", "a relative spread below 1, e.g. 0.05");
        if (s.noise >= 1)
            fail("noise", "must be below 1 (got " + shown(root.at("noise")) + ")", "a relative spread, e.g. 0.05");
    }
    if (root.contains("interference"))
        s.interference = at_most(
            non_negative(root.at("interference"), "interference", "the co-location slowdown factor, e.g. 0.05"),
            kMaxInterference, root.at("interference"), "interference", "the co-location slowdown factor, e.g. 0.05");

    if (root.contains("colocation")) {
        const json &c = root.at("colocation");
        if (!c.is_string() || !parse_colocation(c.get<std::string>(), s.colocation))
            fail("colocation", "unknown model " + shown(c), R"("mps" (concurrent kernels) or "time-sliced" (no MPS))");
    }
    const json &jobs = need(root, "(top level)", "jobs", "list the batch's jobs");
    uint64_t launches = 0;
    if (!jobs.is_array() || jobs.empty())
        fail("jobs", "must be a non-empty array", "list the batch's jobs");
    for (size_t i = 0; i < jobs.size(); ++i) {
        const std::string where = "jobs[" + std::to_string(i) + "]";
        const json &j = jobs[i];
        if (!j.is_object())
            fail(where, "must be an object", R"(write e.g. {"name": "bfs", "memory_gib": 2, "kernels": [...]})");
        check_keys(j, where, {"name", "memory_gib", "cpu_seconds", "kernels", "repeat", "devices", "arrive_s"});
        JobSpec job;
        job.name = j.contains("name") && j.at("name").is_string() ? j.at("name").get<std::string>()
                                                                  : "job" + std::to_string(i);
        job.memory_bytes = gib_to_bytes(need(j, where, "memory_gib", "the job's device memory in GiB"),
                                        where + ".memory_gib", "the job's device memory in GiB");
        if (j.contains("cpu_seconds"))
            job.cpu_seconds =
                seconds(j.at("cpu_seconds"), where + ".cpu_seconds", "host seconds before the GPU part", true);
        if (j.contains("arrive_s"))
            job.arrive_s = seconds(j.at("arrive_s"), where + ".arrive_s", "when the job enters the queue", true);
        if (!s.jobs.empty() && job.arrive_s < s.jobs.back().arrive_s)
            fail(where + ".arrive_s", "arrives before the job listed ahead of it",
                 "list the jobs in the order they arrive (the queue is first come, first served)");
        if (j.contains("devices")) {
            const json &d = j.at("devices");
            const std::string fix = "device indices (0-based, in the order of \"gpus\" with counts expanded)";
            if (!d.is_array() || d.empty())
                fail(where + ".devices", "must be a non-empty array", fix);
            job.allowed_devices = 0;
            for (size_t k = 0; k < d.size(); ++k)
                job.allowed_devices |=
                    1u << count(d[k], where + ".devices[" + std::to_string(k) + "]", 0, s.gpus.size() - 1, fix);
        }
        const json &kernels = need(j, where, "kernels", "list the job's kernels (at least one)");
        if (!kernels.is_array() || kernels.empty())
            fail(where + ".kernels", "must be a non-empty array", "list the job's kernels (at least one)");
        for (size_t k = 0; k < kernels.size(); ++k)
            job.kernels.push_back(parse_kernel(kernels[k], where + ".kernels[" + std::to_string(k) + "]"));
        const uint32_t repeat =
            j.contains("repeat") ? count(j.at("repeat"), where + ".repeat", 1, kMaxJobs, "copies of this job") : 1;
        if (s.jobs.size() + repeat > kMaxJobs)
            fail(where + ".repeat", "more than " + std::to_string(kMaxJobs) + " jobs in all", "split the batch");
        uint64_t job_launches = 0;
        for (const KernelSpec &k : job.kernels)
            job_launches += k.repeat;
        launches += job_launches * repeat;
        if (launches > kMaxLaunches)
            fail(where, "takes the batch past " + std::to_string(kMaxLaunches) + " kernel launches in all",
                 "lower the jobs' or kernels' \"repeat\", or simulate fewer jobs");
        for (uint32_t r = 0; r < repeat; ++r)
            s.jobs.push_back(job);
    }
    return s;
}

MgbScenario load_mgb_scenario(const std::string &path)
{
    std::string text, why;
    if (!read_whole_file(path, text, why, kMaxScenarioBytes))
        throw ScenarioError("scenario: '" + path + "' " + why);
    return parse_mgb_scenario(text);
}

}  // namespace hetpu::mgb_sim
