// SPDX-License-Identifier: LGPL-2.1-or-later
// The RTM-like checkpoint workload over StarPU, its blocks computed on accelerators
// (program bench/ckpt_rtm_device; bench/ckpt_rtm_device.sh runs it on two PoCL OpenCL
// devices, bench/gpu_node.sh on a machine's CUDA devices). bench/ckpt_rtm drives the tier
// engine alone; this one goes through the C API with device-resident data:
//   - forward pass: a wavefield in blocks (one StarPU vector per block, block b on device
//     b % devices), one step task per block and time step (ckpt_rtm_codelets.h); every
//     `every` steps hetpu_ckpt_checkpoint of all blocks, submitted right after the steps,
//     without waiting for them. Blocking per checkpoint: from when the last step task before
//     it finished (or the call, if later) until hetpu_ckpt_wait(DEVICE) resp. (HOST) returns:
//     how long the checkpoint holds the data that the next steps write.
//   - backward pass: every version restored, newest first, each followed by an imaging task
//     per block on its device; with hints, the whole order is given up front. Measured: the
//     time spent in hetpu_ckpt_restore, the pass's wall time, and where the restored bytes
//     came from (device cache, host cache, disk).
//   - both passes run with the device cache tier and with the host tier alone (no [device]
//     table), each with and without hints: four runs per segment, in the same order in each
//     segment, so a drift of a shared machine hits every mode alike. The caches (device:
//     per device, host: in all) hold `cache-fraction` of the versions, so hints matter.
//   - every restored block's digest (computed by the imaging task on its device) must equal
//     the host reference's at that version; any difference: exit status 1.
#include "bench/ckpt_bench_node.h"
#include "bench/ckpt_rtm_codelets.h"
#include "common/cli_args.h"
#include "common/json_line.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

using Clock = std::chrono::steady_clock;
using hetpu::bench::median;

namespace {

struct Options {
    int blocks = 8, block_kib = 1024, steps = 48, every = 4, segments = 2;
    double cache_fraction = 0.25;
    bool await_prefetch = false;
    std::string dir, json;
};

// What every run shares: the devices, the blocks, the versions and their reference digests.
struct Plan {
    Options o;
    std::vector<int> workers;  // one per device
    std::size_t n = 0;         // floats per block
    std::vector<std::vector<float>> home;
    std::vector<starpu_data_handle_t> blocks;
    std::vector<int64_t> versions;              // forward order; version = steps done
    std::vector<std::vector<uint64_t>> digest;  // [version index][block]
    int cached_versions = 1;                    // what each cache holds
    std::size_t block_bytes() const { return n * sizeof(float); }
    std::size_t version_bytes() const { return block_bytes() * blocks.size(); }
    int worker_of(std::size_t b) const { return workers[b % workers.size()]; }
    uint64_t base_of(std::size_t b) const { return static_cast<uint64_t>(b) * n; }
};

float initial_value(uint64_t i) { return static_cast<float>(i % 1000); }

// The forward pass on the host, once: each version's digest per block.
void reference(Plan &p)
{
    std::vector<float> y(p.n);
    p.digest.assign(p.versions.size(), std::vector<uint64_t>(p.blocks.size()));
    for (std::size_t b = 0; b < p.blocks.size(); ++b) {
        for (std::size_t i = 0; i < p.n; ++i)
            y[i] = initial_value(p.base_of(b) + i);
        for (int s = 0; s < p.o.steps; ++s) {
            hetpu::bench::rtm_step_host(y.data(), p.n, p.base_of(b), static_cast<uint32_t>(s));
            if ((s + 1) % p.o.every == 0)
                p.digest[static_cast<std::size_t>((s + 1) / p.o.every - 1)][b] =
                    hetpu::bench::rtm_digest_host(y.data(), p.n, p.base_of(b));
        }
    }
}

int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// Without unwinding: the backend's and StarPU's threads are still running.
[[noreturn]] void fail_now()
{
    std::fflush(stdout);
    std::_Exit(1);
}

[[noreturn]] void die(const char *what)
{
    std::fprintf(stderr, "ckpt_rtm_device: %s: %s\n", what, hetpu_ckpt_last_error());
    fail_now();
}

void check(int rc, const char *what)
{
    if (rc)
        die(what);
}

hetpu_ckpt_stats stats()
{
    hetpu_ckpt_stats s{};
    check(hetpu_ckpt_get_stats(&s), "hetpu_ckpt_get_stats");
    return s;
}

struct RunResult {
    std::vector<double> blocking_s;
    double pacing_s = 0;  // waiting for the previous version's flush (not blocking: see forward)
    double restore_s = 0, backward_s = 0;
    uint64_t from_device = 0, from_host = 0, from_disk = 0;  // bytes restored from each tier
    hetpu_ckpt_stats forward{};
    int mismatches = 0;
};

std::string config(const Plan &p, const std::string &dir, bool device_tier)
{
    const std::size_t per_device = p.version_bytes() / p.workers.size();
    std::string c = "versions_to_keep = 0\n[host]\nsize = \"" +
                    std::to_string(static_cast<std::size_t>(p.cached_versions) * p.version_bytes()) +
                    "\"\nincremental_init = false\n[local]\npath = \"" + dir + "\"\ndrop_page_cache = true\n";
    if (device_tier)
        c += "[device]\nsize = \"" + std::to_string(static_cast<std::size_t>(p.cached_versions) * per_device) +
             "\"\nchunk = \"" + std::to_string(per_device) + "\"\nslot = \"64KiB\"\n";
    return c;
}

// Every `every` steps: the steps' tasks, then the checkpoint, submitted at once. Before the
// checkpoint, the previous version must be on the local disk (each cache then has room
// without waiting for a flush, and no capture spills device data to the host); that wait
// overlaps with the steps and is reported apart (pacing) from the blocking.
void forward(const Plan &p, bool device_tier, RunResult &r)
{
    for (std::size_t b = 0; b < p.blocks.size(); ++b) {  // initial state, only in main memory
        check(starpu_data_acquire(p.blocks[b], STARPU_W), "starpu_data_acquire");
        float *y = static_cast<float *>(starpu_data_handle_to_pointer(p.blocks[b], STARPU_MAIN_RAM));
        for (std::size_t i = 0; i < p.n; ++i)
            y[i] = initial_value(p.base_of(b) + i);
        starpu_data_release(p.blocks[b]);
    }
    int s = 0;
    for (std::size_t v = 0; v < p.versions.size(); ++v) {
        for (; s < p.versions[v]; ++s)
            for (std::size_t b = 0; b < p.blocks.size(); ++b)
                if (hetpu::bench::rtm_submit_step(p.blocks[b], p.worker_of(b), p.base_of(b), static_cast<uint32_t>(s)))
                    die("starpu_task_submit");
        if (v > 0) {
            const auto t = Clock::now();
            check(hetpu_ckpt_wait("rtm", p.versions[v - 1], HETPU_CKPT_TIER_LOCAL), "wait LOCAL");
            r.pacing_s += std::chrono::duration<double>(Clock::now() - t).count();
        }
        const int64_t called = now_ns();
        check(hetpu_ckpt_checkpoint("rtm", p.versions[v]), "hetpu_ckpt_checkpoint");
        check(hetpu_ckpt_wait("rtm", p.versions[v], device_tier ? HETPU_CKPT_TIER_DEVICE : HETPU_CKPT_TIER_HOST),
              "wait DEVICE/HOST");
        const int64_t returned = now_ns();
        r.blocking_s.push_back(seconds(returned - std::max(called, hetpu::bench::rtm_last_step_finished_ns())));
    }
    check(hetpu_ckpt_wait("rtm", p.versions.back(), HETPU_CKPT_TIER_LOCAL), "wait LOCAL");
    r.forward = stats();
}

// --await-prefetch (tests): before restoring rank r, wait until the device prefetch has
// brought it. The caches end the forward pass with the newest `cached_versions` versions;
// each later one is prefetched, in rank order, once a restore frees room.
void await_prefetch(const Plan &p, std::size_t rank, uint64_t prefetched_before)
{
    const std::size_t cached = static_cast<std::size_t>(p.cached_versions);
    if (rank < cached)
        return;
    const uint64_t want = prefetched_before + (rank - cached + 1) * p.version_bytes();
    const auto start = Clock::now();
    while (stats().device_prefetched_bytes < want) {
        // A condition, not a deadline; the limit only turns a prefetch that never comes into a failure.
        if (Clock::now() - start > std::chrono::seconds(120)) {
            std::fprintf(stderr, "ckpt_rtm_device: the device prefetch of restore %zu never came\n", rank);
            fail_now();
        }
        usleep(1000);
    }
}

void backward(const Plan &p, bool device_tier, bool hints, RunResult &r)
{
    const std::size_t nb = p.blocks.size(), nv = p.versions.size();
    std::vector<std::vector<float>> image(p.workers.size(), std::vector<float>(p.n, 0.0f));
    std::vector<starpu_data_handle_t> image_h(p.workers.size());
    for (std::size_t d = 0; d < image.size(); ++d)
        starpu_vector_data_register(&image_h[d], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(image[d].data()), p.n,
                                    sizeof(float));
    std::vector<uint64_t> got(nv * nb, 0);
    std::vector<starpu_data_handle_t> digest_h(nv * nb);
    for (std::size_t k = 0; k < got.size(); ++k)
        starpu_vector_data_register(&digest_h[k], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&got[k]), 1,
                                    sizeof(uint64_t));
    std::vector<int64_t> order(p.versions.rbegin(), p.versions.rend());
    if (hints)
        check(hetpu_ckpt_prefetch_hint("rtm", order.data(), order.size()), "hetpu_ckpt_prefetch_hint");
    const hetpu_ckpt_stats before = stats();
    const auto pass = Clock::now();
    for (std::size_t rank = 0; rank < nv; ++rank) {
        if (device_tier && hints && p.o.await_prefetch)
            await_prefetch(p, rank, before.device_prefetched_bytes);
        const std::size_t v = nv - 1 - rank;
        const auto t = Clock::now();
        check(hetpu_ckpt_restore("rtm", order[rank]), "hetpu_ckpt_restore");
        r.restore_s += std::chrono::duration<double>(Clock::now() - t).count();
        for (std::size_t b = 0; b < nb; ++b)
            if (hetpu::bench::rtm_submit_image(p.blocks[b], image_h[b % p.workers.size()], digest_h[v * nb + b],
                                               p.worker_of(b), p.base_of(b)))
                die("starpu_task_submit");
    }
    starpu_task_wait_for_all();
    r.backward_s = std::chrono::duration<double>(Clock::now() - pass).count();
    const hetpu_ckpt_stats after = stats();
    r.from_device = after.restored_from_device_bytes - before.restored_from_device_bytes;
    r.from_host = after.restored_from_host_bytes - before.restored_from_host_bytes;
    r.from_disk = after.restored_from_disk_bytes - before.restored_from_disk_bytes;
    // After the timed part: the digests come back to main memory with their handles.
    for (starpu_data_handle_t h : digest_h)
        starpu_data_unregister(h);
    for (starpu_data_handle_t h : image_h)
        starpu_data_unregister(h);
    for (std::size_t v = 0; v < nv; ++v)
        for (std::size_t b = 0; b < nb; ++b)
            if (got[v * nb + b] != p.digest[v][b]) {
                std::fprintf(stderr,
                             "ckpt_rtm_device: version %lld block %zu restored wrong (digest %016llx, want %016llx)\n",
                             static_cast<long long>(p.versions[v]), b, static_cast<unsigned long long>(got[v * nb + b]),
                             static_cast<unsigned long long>(p.digest[v][b]));
                ++r.mismatches;
            }
    if (r.from_device + r.from_host + r.from_disk != nv * p.version_bytes()) {
        std::fprintf(stderr, "ckpt_rtm_device: restores read %llu bytes, the versions hold %zu\n",
                     static_cast<unsigned long long>(r.from_device + r.from_host + r.from_disk),
                     nv * p.version_bytes());
        ++r.mismatches;
    }
}

RunResult run(const Plan &p, const std::string &dir, bool device_tier, bool hints)
{
    std::system(("rm -rf '" + dir + "'").c_str());
    ::mkdir(dir.c_str(), 0755);
    if (hetpu_ckpt_init_from_string(config(p, dir, device_tier).c_str()))
        die("hetpu_ckpt_init");
    for (std::size_t b = 0; b < p.blocks.size(); ++b)
        check(hetpu_ckpt_protect(("b" + std::to_string(b)).c_str(), p.blocks[b]), "hetpu_ckpt_protect");
    hetpu::bench::wait_device_caches_grown();
    RunResult r;
    forward(p, device_tier, r);
    backward(p, device_tier, hints, r);
    for (std::size_t b = 0; b < p.blocks.size(); ++b)
        hetpu_ckpt_unprotect(("b" + std::to_string(b)).c_str());
    check(hetpu_ckpt_finalize(), "hetpu_ckpt_finalize");
    std::system(("rm -rf '" + dir + "'").c_str());
    return r;
}

struct Mode {
    const char *tier;
    bool device, hints;
    std::vector<RunResult> runs;
};

// The forward pass's blocking per checkpoint, host tier against device tier, and where the
// device tier's captures came from: printed, and one JSON record through `emit`.
template <typename Emit>
void forward_report(const Plan &p, const std::vector<Mode> &modes, std::vector<double> ratios, Emit emit)
{
    const Options &o = p.o;
    const double mib = 1.0 / (1 << 20);
    std::vector<double> host_all, dev_all;
    double host_pacing = 0, dev_pacing = 0;
    hetpu_ckpt_stats dev{};
    for (const Mode &m : modes)
        for (const RunResult &r : m.runs) {
            (m.device ? dev_all : host_all)
                .insert((m.device ? dev_all : host_all).end(), r.blocking_s.begin(), r.blocking_s.end());
            (m.device ? dev_pacing : host_pacing) += r.pacing_s;
            if (m.device)
                hetpu::bench::add_capture_stats(dev, r.forward);
        }
    std::sort(ratios.begin(), ratios.end());
    const double hm = median(host_all), dm = median(dev_all);
    std::printf("\nforward: median blocking per checkpoint: host tier %.2f ms, device tier %.2f ms: ratio %.2f "
                "(per segment %.2f .. %.2f)\n",
                hm * 1e3, dm * 1e3, hm / dm, ratios.front(), ratios.back());
    std::printf("forward, device tier: %llu blocks captured from device memory, %llu from main memory; %.1f MiB "
                "device to device, %.1f MiB to peers, %llu bytes device to host before resuming\n",
                static_cast<unsigned long long>(dev.device_path_captures),
                static_cast<unsigned long long>(dev.host_path_captures), dev.device_local_bytes * mib,
                dev.device_peer_bytes * mib, static_cast<unsigned long long>(dev.device_to_host_at_capture_bytes));
    std::printf("forward, device tier: the group copies took %.2f ms per checkpoint (the rest of the blocking is "
                "acquisition, hand-over between threads and wake-ups)\n",
                dev.device_capture_copy_s / static_cast<double>(dev_all.size()) * 1e3);
    std::printf("forward: waiting for the previous version's flush, per checkpoint: host tier %.2f ms, device tier "
                "%.2f ms\n",
                host_pacing / static_cast<double>(host_all.size()) * 1e3,
                dev_pacing / static_cast<double>(dev_all.size()) * 1e3);
    emit({{"bench", "ckpt_rtm_device"},
          {"kind", "forward"},
          {"devices", p.workers.size()},
          {"blocks", o.blocks},
          {"block_kib", o.block_kib},
          {"versions", p.versions.size()},
          {"segments", o.segments},
          {"host_median_s", hm},
          {"device_median_s", dm},
          {"ratio", hm / dm},
          {"ratio_min", ratios.front()},
          {"ratio_max", ratios.back()},
          {"device_path_captures", dev.device_path_captures},
          {"host_path_captures", dev.host_path_captures},
          {"device_to_host_at_capture_bytes", dev.device_to_host_at_capture_bytes},
          {"device_capture_copy_s", dev.device_capture_copy_s},
          {"host_pacing_s", host_pacing},
          {"device_pacing_s", dev_pacing}});
}

// The backward pass per tier and hints: restore wait, and the tier each block restore came
// from. Returns how many restored blocks differed from the forward state.
template <typename Emit> int backward_table(const Plan &p, const std::vector<Mode> &modes, Emit emit)
{
    std::printf("\nbackward (%zu restores; block restores served from each tier, summed over segments)\n",
                p.versions.size());
    std::printf("%-7s %-6s %16s %13s %8s %8s %8s\n", "tier", "hints", "restore wait ms", "backward ms", "device",
                "host", "disk");
    int mismatches = 0;
    for (const Mode &m : modes) {
        std::vector<double> wait, pass;
        uint64_t from[3] = {0, 0, 0};
        for (const RunResult &r : m.runs) {
            wait.push_back(r.restore_s);
            pass.push_back(r.backward_s);
            from[0] += r.from_device / p.block_bytes();
            from[1] += r.from_host / p.block_bytes();
            from[2] += r.from_disk / p.block_bytes();
            mismatches += r.mismatches;
        }
        std::printf("%-7s %-6s %16.1f %13.1f %8llu %8llu %8llu\n", m.tier, m.hints ? "all" : "none", median(wait) * 1e3,
                    median(pass) * 1e3, static_cast<unsigned long long>(from[0]),
                    static_cast<unsigned long long>(from[1]), static_cast<unsigned long long>(from[2]));
        emit({{"bench", "ckpt_rtm_device"},
              {"kind", "backward"},
              {"tier", m.tier},
              {"hints", m.hints ? "all" : "none"},
              {"restore_wait_median_s", median(wait)},
              {"backward_median_s", median(pass)},
              {"block_restores_from_device", from[0]},
              {"block_restores_from_host", from[1]},
              {"block_restores_from_disk", from[2]},
              {"block_restores", m.runs.size() * p.versions.size() * p.blocks.size()}});
    }
    return mismatches;
}

}  // namespace

int main(int argc, char **argv)
{
    Options o;
    CLI::App app{"RTM-like checkpointing of device-resident data over StarPU: blocking per checkpoint with the device "
                 "cache tier vs the host tier, and the backward pass's restores with and without hints.",
                 "ckpt_rtm_device"};
    app.add_option("--blocks", o.blocks, "wavefield blocks (a multiple of the device count)")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_option("--block-kib", o.block_kib, "size of a block in KiB (a multiple of 64)")
        ->capture_default_str()
        ->check(CLI::Range(64, 1 << 22));
    app.add_option("--steps", o.steps, "time steps of the forward pass")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--every", o.every, "a checkpoint every this many steps")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--cache-fraction", o.cache_fraction, "versions each cache holds, as a fraction of all")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--segments", o.segments, "rounds of the four runs")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--dir", o.dir, "where the local tier goes (default: a new directory in /var/tmp)");
    app.add_option("--json", o.json, "JSON lines to FILE")->type_name("FILE");
    app.add_flag("--await-prefetch", o.await_prefetch,
                 "before each hinted restore, wait until the device prefetch has brought it (tests: counts that do "
                 "not depend on timing)");
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    if (o.block_kib % 64) {
        std::fprintf(stderr, "ckpt_rtm_device: --block-kib %d is not a multiple of 64 (the device cache's slot)\n",
                     o.block_kib);
        return 2;
    }
    if (o.steps < o.every * 2) {
        std::fprintf(stderr, "ckpt_rtm_device: --steps %d gives fewer than 2 checkpoints at --every %d\n", o.steps,
                     o.every);
        return 2;
    }
    bool own_dir = o.dir.empty();
    if (own_dir) {
        char tmpl[] = "/var/tmp/hetpu-ckpt-rtm-device.XXXXXX";
        if (!::mkdtemp(tmpl)) {
            std::perror("mkdtemp");
            return 1;
        }
        o.dir = tmpl;
    } else if (::mkdir(o.dir.c_str(), 0755) && errno != EEXIST) {
        std::fprintf(stderr, "ckpt_rtm_device: --dir %s: %s\n", o.dir.c_str(), std::strerror(errno));
        return 1;
    }

    if (starpu_init(nullptr))
        return 1;
    Plan p;
    p.o = o;
    p.workers = hetpu::bench::accelerator_workers();
#ifndef HETPU_HAVE_OPENCL
    // Built without hetpu's OpenCL codelets: no kernel to run on an OpenCL device.
    p.workers.erase(std::remove_if(p.workers.begin(), p.workers.end(),
                                   [](int w) { return starpu_worker_get_type(w) == STARPU_OPENCL_WORKER; }),
                    p.workers.end());
#endif
    if (p.workers.empty()) {
        std::fprintf(stderr, "ckpt_rtm_device: no OpenCL or CUDA device with kernels in this build "
                             "(bench/ckpt_rtm_device.sh runs it on two PoCL devices)\n");
        starpu_shutdown();
        return 77;
    }
    if (o.blocks % static_cast<int>(p.workers.size())) {
        std::fprintf(stderr, "ckpt_rtm_device: --blocks %d is not a multiple of the %zu devices\n", o.blocks,
                     p.workers.size());
        starpu_shutdown();
        return 2;
    }
    if (int rc = hetpu::bench::rtm_codelets_load()) {
        std::fprintf(stderr, "ckpt_rtm_device: building the OpenCL kernels failed (%d)\n", rc);
        starpu_shutdown();
        return 1;
    }
    p.n = static_cast<std::size_t>(o.block_kib) * 1024 / sizeof(float);
    p.home.assign(static_cast<std::size_t>(o.blocks), std::vector<float>(p.n));
    p.blocks.resize(p.home.size());
    for (std::size_t b = 0; b < p.home.size(); ++b)
        starpu_vector_data_register(&p.blocks[b], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(p.home[b].data()), p.n,
                                    sizeof(float));
    for (int s = o.every; s <= o.steps; s += o.every)
        p.versions.push_back(s);
    p.cached_versions =
        std::max(1, static_cast<int>(std::lround(o.cache_fraction * static_cast<double>(p.versions.size()))));
    reference(p);
    std::vector<Mode> modes = {
        {"host", false, false, {}}, {"device", true, false, {}}, {"host", false, true, {}}, {"device", true, true, {}}};
    std::vector<double> ratios;
    for (int seg = 0; seg < o.segments; ++seg) {
        for (Mode &m : modes)
            m.runs.push_back(run(p, o.dir + "/run", m.device, m.hints));
        std::vector<double> h, d;
        for (const Mode &m : modes)
            for (double x : m.runs.back().blocking_s)
                (m.device ? d : h).push_back(x);
        ratios.push_back(median(h) / median(d));
    }
    for (starpu_data_handle_t h : p.blocks)
        starpu_data_unregister(h);
    hetpu::bench::rtm_codelets_unload();
    starpu_shutdown();
    if (own_dir)
        std::system(("rm -rf '" + o.dir + "'").c_str());

    std::FILE *json = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
    auto emit = [&](const hetpu::JsonRecord &j) {
        if (json)
            std::fprintf(json, "%s\n", hetpu::json_line(j).c_str());
    };
    const double mib = 1.0 / (1 << 20);
    std::printf("devices %zu, %d blocks of %d KiB (%.1f MiB per version), %d steps, a checkpoint every %d: %zu "
                "versions; caches hold %d versions (device: per device); %d segments\n",
                p.workers.size(), o.blocks, o.block_kib, p.version_bytes() * mib, o.steps, o.every, p.versions.size(),
                p.cached_versions, o.segments);
    forward_report(p, modes, ratios, emit);

    const int mismatches = backward_table(p, modes, emit);
    const std::size_t checked =
        modes.size() * static_cast<std::size_t>(o.segments) * p.versions.size() * p.blocks.size();
    std::printf("\nverified: %zu restored blocks, %d differ from the forward state\n", checked, mismatches);
    emit({{"bench", "ckpt_rtm_device"}, {"kind", "verify"}, {"restored_blocks", checked}, {"mismatches", mismatches}});
    if (json)
        std::fclose(json);
    return mismatches ? 1 : 0;
}
