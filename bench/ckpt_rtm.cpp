// SPDX-License-Identifier: LGPL-2.1-or-later
// RTM-like checkpoint benchmark (the checkpointing paper): a forward pass produces a variable-size checkpoint
// every few ms, a backward pass restores them in reverse (also sequential and irregular)
// order with compute between restores. Reports, beside the physical floors measured in the
// same run (memcpy bandwidth, disk write and read bandwidth with fsync and the page cache
// dropped):
//   - application blocking per checkpoint: synchronous write to disk vs the async engine with
//     a host cache that holds everything;
//   - restore throughput (bytes / time the application waited in restore) with a host cache
//     holding a quarter of the data: FIFO eviction, score eviction with no, one and all hints.
// Results as JSON lines (--json FILE) and a table on stdout.
#include "ckpt_backend/engine/engine.h"
#include "common/json_line.h"
#include "common/cli_args.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace hetpu::ckpt;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    int versions = 32;
    std::size_t min_bytes = 1u << 20, max_bytes = 5u << 20;
    double compute_ms = 5.0;       // work between checkpoints / restores
    double cache_fraction = 0.25;  // host cache size for the restore runs, of the total
    std::string dir;
    std::string json;
    unsigned seed = 1;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void compute(double ms)
{  // the GPU computes; the host thread is idle meanwhile
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

char *touched_buffer(std::size_t bytes)
{
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    ::madvise(p, bytes, MADV_HUGEPAGE);
    std::memset(p, 0, bytes);
    return static_cast<char *>(p);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::string fresh_dir(const Options &o, const std::string &tag)
{
    std::string d = o.dir + "/" + tag;
    std::system(("rm -rf '" + d + "'").c_str());
    ::mkdir(d.c_str(), 0755);
    return d;
}

struct Workload {
    std::vector<std::size_t> sizes;
    std::vector<char *> data;  // the application's wavefield snapshots
    std::size_t total = 0, largest = 0;
};

Workload make_workload(const Options &o)
{
    Workload w;
    std::mt19937 rng(o.seed);
    for (int v = 0; v < o.versions; ++v) {
        std::size_t s = o.min_bytes + rng() % (o.max_bytes - o.min_bytes + 1);
        w.sizes.push_back(s);
        w.total += s;
        w.largest = std::max(w.largest, s);
    }
    for (std::size_t s : w.sizes) {
        char *p = touched_buffer(s);
        for (std::size_t i = 0; i < s; i += 64)
            p[i] = static_cast<char>(i * 7 + s);
        w.data.push_back(p);
    }
    return w;
}

struct Floors {
    double memcpy_Bps, write_Bps, read_Bps;
};

Floors measure_floors(const Options &o, const Workload &w)
{
    Floors f{};
    // memcpy floor: each checkpoint into its own pre-touched destination, as an ideal host
    // cache would place it (copying into one reused buffer would measure the CPU cache).
    char *arena = touched_buffer(w.total);
    char *dst = touched_buffer(w.largest);
    std::vector<double> rates;
    for (int rep = 0; rep < 3; ++rep) {
        std::size_t off = 0;
        for (int v = 0; v < o.versions; ++v) {
            auto t = Clock::now();
            std::memcpy(arena + off, w.data[v], w.sizes[v]);
            rates.push_back(w.sizes[v] / seconds_since(t));
            off += w.sizes[v];
        }
    }
    ::munmap(arena, w.total);
    f.memcpy_Bps = median(rates);
    const std::string d = fresh_dir(o, "floor");
    WriteOptions wo;
    wo.drop_page_cache = true;
    double wt = 0, rt = 0;
    std::size_t bytes = 0;
    for (int v = 0; v < std::min(o.versions, 12); ++v) {
        auto t = Clock::now();
        write_file_durably(d, "f" + std::to_string(v), w.data[v], w.sizes[v], wo);
        wt += seconds_since(t);
        bytes += w.sizes[v];
    }
    for (int v = 0; v < std::min(o.versions, 12); ++v) {
        auto t = Clock::now();
        read_file_exact(d + "/f" + std::to_string(v), dst, w.sizes[v]);
        rt += seconds_since(t);
    }
    f.write_Bps = bytes / wt;
    f.read_Bps = bytes / rt;
    ::munmap(dst, w.largest);
    std::system(("rm -rf '" + d + "'").c_str());
    return f;
}

EngineConfig base_config(const std::string &dir)
{
    EngineConfig c;
    c.local_dir = dir;
    c.drop_page_cache = true;  // restores from disk must pay the disk, not the page cache
    c.host_incremental_init = true;
    return c;
}

std::unique_ptr<Engine> start(const EngineConfig &c)
{
    std::unique_ptr<Engine> e = Engine::create(c);
    // The benchmark measures steady state: wait for the background initialisation.
    auto t = Clock::now();
    while (e->host_ready_bytes() < c.host_bytes && seconds_since(t) < 30)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return e;
}

// Forward pass; returns per-checkpoint blocking seconds.
std::vector<double> forward(Engine &e, const Options &o, const Workload &w)
{
    std::vector<double> blocked;
    for (int v = 0; v < o.versions; ++v) {
        compute(o.compute_ms);
        auto t = Clock::now();
        e.begin("rtm", v, {{"wavefield", w.sizes[v]}});
        e.capture("rtm", v, 0, w.data[v]);
        blocked.push_back(seconds_since(t));
    }
    return blocked;
}

enum class Hints { None, One, All };
const char *hints_name(Hints h) { return h == Hints::None ? "none" : h == Hints::One ? "one" : "all"; }

struct RestoreResult {
    double restore_s, forward_block_s, Bps;
    std::uint64_t from_host, from_disk;
};

RestoreResult restore_run(const Options &o, const Workload &w, EvictionPolicy policy, Hints hints,
                          const std::vector<int> &order, const std::string &tag)
{
    EngineConfig c = base_config(fresh_dir(o, tag));
    c.eviction = policy;
    c.host_bytes = static_cast<std::uint64_t>(w.total * o.cache_fraction);
    auto e = start(c);
    std::vector<std::int64_t> all(order.begin(), order.end());
    if (hints == Hints::All)
        e->prefetch_hint("rtm", all);
    auto fb = forward(*e, o, w);
    RestoreResult r{};
    r.forward_block_s = std::accumulate(fb.begin(), fb.end(), 0.0);
    char *dst = touched_buffer(w.largest);
    if (hints == Hints::One)
        e->prefetch_hint("rtm", {all[0]});
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const int v = order[i];
        auto t = Clock::now();
        e->restore("rtm", v, 0, dst, w.sizes[v]);
        r.restore_s += seconds_since(t);
        bytes += w.sizes[v];
        if (std::memcmp(dst, w.data[v], w.sizes[v]) != 0) {
            std::fprintf(stderr, "ckpt_rtm: restore %d differs\n", v);
            std::exit(1);
        }
        if (hints == Hints::One && i + 1 < order.size())
            e->prefetch_hint("rtm", {all[i + 1]});
        compute(o.compute_ms);
    }
    r.Bps = bytes / r.restore_s;
    r.from_host = e->stats().restored_from_host_bytes;
    r.from_disk = e->stats().restored_from_disk_bytes;
    e.reset();
    ::munmap(dst, w.largest);
    std::system(("rm -rf '" + c.local_dir + "'").c_str());
    return r;
}

// Restore throughput with a host cache holding cache_fraction of the data, per restore
// order, eviction policy and hints: printed, and one JSON record each through `emit`.
template <typename Emit> void restore_table(const Options &o, const Workload &w, Emit emit)
{
    std::vector<int> reverse(o.versions), sequential(o.versions), irregular(o.versions);
    std::iota(sequential.begin(), sequential.end(), 0);
    std::reverse_copy(sequential.begin(), sequential.end(), reverse.begin());
    irregular = sequential;
    std::shuffle(irregular.begin(), irregular.end(), std::mt19937(o.seed + 1));
    struct Mode {
        const char *name;
        EvictionPolicy p;
        Hints h;
    };
    const Mode modes[] = {{"fifo", EvictionPolicy::Fifo, Hints::None},
                          {"score", EvictionPolicy::Score, Hints::None},
                          {"score", EvictionPolicy::Score, Hints::One},
                          {"score", EvictionPolicy::Score, Hints::All}};
    struct Order {
        const char *name;
        const std::vector<int> *v;
    };
    const Order orders[] = {{"reverse", &reverse}, {"sequential", &sequential}, {"irregular", &irregular}};
    std::printf("\nrestore throughput, host cache = %.0f%% of the data (GB/s of application wait; x = vs FIFO)\n",
                o.cache_fraction * 100);
    std::printf("%-11s %-7s %-6s %10s %8s %10s %12s\n", "order", "policy", "hints", "GB/s", "x FIFO", "host hit",
                "fwd block ms");
    for (const Order &ord : orders) {
        double fifo_Bps = 0;
        for (const Mode &m : modes) {
            RestoreResult r =
                restore_run(o, w, m.p, m.h, *ord.v, std::string("r_") + ord.name + "_" + m.name + hints_name(m.h));
            if (m.p == EvictionPolicy::Fifo)
                fifo_Bps = r.Bps;
            const double hit = static_cast<double>(r.from_host) / (r.from_host + r.from_disk);
            std::printf("%-11s %-7s %-6s %10.2f %8.2f %9.0f%% %12.2f\n", ord.name, m.name, hints_name(m.h), r.Bps / 1e9,
                        r.Bps / fifo_Bps, hit * 100, r.forward_block_s * 1e3);
            const hetpu::JsonRecord j = {{"bench", "ckpt_rtm"},
                                         {"kind", "restore"},
                                         {"order", ord.name},
                                         {"policy", m.name},
                                         {"hints", hints_name(m.h)},
                                         {"restore_GBps", r.Bps / 1e9},
                                         {"over_fifo", r.Bps / fifo_Bps},
                                         {"host_hit_fraction", hit},
                                         {"restore_wait_s", r.restore_s},
                                         {"forward_block_s", r.forward_block_s},
                                         {"cache_fraction", o.cache_fraction}};
            emit(j);
        }
    }
}

}  // namespace

int run(int argc, char **argv)
{
    Options o;
    CLI::App app{"RTM-like checkpointing: blocking per checkpoint (asynchronous vs synchronous disk vs the memcpy "
                 "floor) and restore throughput under FIFO and score eviction with no, one and all hints.",
                 "ckpt_rtm"};
    double min_mib = o.min_bytes / double(1 << 20), max_mib = o.max_bytes / double(1 << 20);
    app.add_option("--versions", o.versions, "checkpoints in the forward pass")
        ->capture_default_str()
        ->check(CLI::Range(2, 1 << 20));
    app.add_option("--min-mib", min_mib, "smallest checkpoint (MiB)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--max-mib", max_mib, "largest checkpoint (MiB)")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--compute-ms", o.compute_ms, "compute between checkpoints (ms)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--cache-fraction", o.cache_fraction, "host cache size over the data's")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--dir", o.dir, "where the local tier goes (default: a new directory in /var/tmp)");
    app.add_option("--json", o.json, "JSON lines to FILE")->type_name("FILE");
    app.add_option("--seed", o.seed, "workload seed")->capture_default_str();
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    o.min_bytes = static_cast<std::size_t>(min_mib * (1 << 20));
    o.max_bytes = static_cast<std::size_t>(max_mib * (1 << 20));
    if (o.max_bytes < o.min_bytes) {
        std::fprintf(stderr, "ckpt_rtm: --max-mib %g is below --min-mib %g\n", max_mib, min_mib);
        return 2;
    }
    bool own_dir = false;
    if (o.dir.empty()) {
        char tmpl[] = "/var/tmp/hetpu-ckpt-rtm.XXXXXX";
        if (!::mkdtemp(tmpl)) {
            std::perror("mkdtemp");
            return 1;
        }
        o.dir = tmpl;
        own_dir = true;
    }
    std::FILE *json = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
    auto emit = [&](const hetpu::JsonRecord &j) {
        if (json)
            std::fprintf(json, "%s\n", hetpu::json_line(j).c_str());
    };

    Workload w = make_workload(o);
    const Floors f = measure_floors(o, w);
    std::printf("workload: %d checkpoints, %.1f-%.1f MiB (%.0f MiB total), compute %.1f ms between\n", o.versions,
                o.min_bytes / 1048576.0, o.max_bytes / 1048576.0, w.total / 1048576.0, o.compute_ms);
    std::printf("floors: memcpy %.2f GB/s, disk write+fsync %.2f GB/s, disk read %.2f GB/s\n", f.memcpy_Bps / 1e9,
                f.write_Bps / 1e9, f.read_Bps / 1e9);
    {
        const hetpu::JsonRecord j = {{"bench", "ckpt_rtm"},
                                     {"kind", "floors"},
                                     {"versions", o.versions},
                                     {"total_bytes", static_cast<unsigned long long>(w.total)},
                                     {"memcpy_GBps", f.memcpy_Bps / 1e9},
                                     {"disk_write_GBps", f.write_Bps / 1e9},
                                     {"disk_read_GBps", f.read_Bps / 1e9}};
        emit(j);
    }

    // Blocking per checkpoint. The floor is the same forward pass copying each checkpoint
    // into an ideal host cache (its own pre-touched destination, no bookkeeping, nothing
    // running beside it): the copy the application cannot avoid, at the same pacing (a copy
    // right after a compute phase starts with cold CPU caches, unlike back-to-back copies).
    // Paired measurement (the machine is shared, so separate passes see different
    // backgrounds): before each checkpoint the same bytes are also copied into an ideal host
    // cache (their own pre-touched destination, no bookkeeping), after the same compute
    // pause, while the engine's flushes of earlier checkpoints run as they would. Three passes.
    std::vector<double> ideal_block, async_block;
    double lock_wait_max = 0, lock_wait_total = 0;
    EngineConfig room = base_config(o.dir);
    room.host_bytes = w.total + (w.total >> 3) + (64u << 20);
    for (int rep = 0; rep < 3; ++rep) {
        char *ideal = touched_buffer(w.total);
        room.local_dir = fresh_dir(o, "room");
        auto e = start(room);
        std::size_t off = 0;
        for (int v = 0; v < o.versions; ++v) {
            compute(o.compute_ms);
            auto t = Clock::now();
            std::memcpy(ideal + off, w.data[v], w.sizes[v]);
            ideal_block.push_back(seconds_since(t));
            off += w.sizes[v];
            compute(o.compute_ms);
            t = Clock::now();
            e->begin("rtm", v, {{"wavefield", w.sizes[v]}});
            e->capture("rtm", v, 0, w.data[v]);
            async_block.push_back(seconds_since(t));
        }
        const EngineStats st = e->stats();
        lock_wait_max = std::max(lock_wait_max, st.capture_lock_wait_max_s);
        lock_wait_total += st.capture_lock_wait_total_s;
        e.reset();
        ::munmap(ideal, w.total);
    }
    auto mean_ms = [](const std::vector<double> &v) {
        return std::accumulate(v.begin(), v.end(), 0.0) / v.size() * 1e3;
    };
    double b2b_ms = 0;
    for (std::size_t s : w.sizes)
        b2b_ms += s / f.memcpy_Bps * 1e3;
    b2b_ms /= o.versions;
    EngineConfig sync = base_config(fresh_dir(o, "sync"));
    sync.host_bytes = 0;  // no host tier: every checkpoint is written and fsynced before returning
    std::vector<double> sync_block;
    {
        auto e = start(sync);
        sync_block = forward(*e, o, w);
    }
    const double floor_ms = mean_ms(ideal_block), async_ms = mean_ms(async_block), sync_ms = mean_ms(sync_block);
    const double floor_med = median(ideal_block) * 1e3, async_med = median(async_block) * 1e3,
                 sync_med = median(sync_block) * 1e3;
    std::printf("\nblocking per checkpoint      mean ms   median ms   (back-to-back memcpy: %.3f ms)\n", b2b_ms);
    std::printf("  memcpy floor (ideal cache) %8.3f %10.3f\n", floor_ms, floor_med);
    std::printf("  async, host cache has room %8.3f %10.3f   %.2fx / %.2fx floor\n", async_ms, async_med,
                async_ms / floor_ms, async_med / floor_med);
    std::printf("  synchronous disk           %8.3f %10.3f   %.1fx / %.1fx async\n", sync_ms, sync_med,
                sync_ms / async_ms, sync_med / async_med);
    std::printf("  (async: engine lock wait %.3f ms per checkpoint on average, %.3f ms at worst)\n",
                lock_wait_total / async_block.size() * 1e3, lock_wait_max * 1e3);
    {
        const hetpu::JsonRecord j = {{"bench", "ckpt_rtm"},
                                     {"kind", "blocking"},
                                     {"memcpy_floor_ms", floor_ms},
                                     {"memcpy_floor_median_ms", floor_med},
                                     {"memcpy_back_to_back_ms", b2b_ms},
                                     {"async_room_ms", async_ms},
                                     {"async_room_median_ms", async_med},
                                     {"sync_disk_ms", sync_ms},
                                     {"sync_disk_median_ms", sync_med},
                                     {"async_over_floor", async_ms / floor_ms},
                                     {"async_over_floor_median", async_med / floor_med},
                                     {"sync_over_async", sync_ms / async_ms},
                                     {"sync_over_async_median", sync_med / async_med},
                                     {"lock_wait_mean_ms", lock_wait_total / async_block.size() * 1e3},
                                     {"lock_wait_max_ms", lock_wait_max * 1e3}};
        emit(j);
    }
    std::system(("rm -rf '" + sync.local_dir + "' '" + room.local_dir + "'").c_str());

    restore_table(o, w, emit);
    if (json)
        std::fclose(json);
    if (own_dir)
        std::system(("rm -rf '" + o.dir + "'").c_str());
    return 0;
}

int main(int argc, char **argv)
{
    try {
        return run(argc, argv);
    } catch (const hetpu::ckpt::Error &e) {
        std::fprintf(stderr, "ckpt_rtm: %s\n", e.what());
        return 1;
    }
}
