// SPDX-License-Identifier: LGPL-2.1-or-later
// Crash-consistency test program (driven by crash.sh).
//   crash_writer write DIR   resume from the latest version and checkpoint forever; after
//                            every 4th version, wait until it is durable on the local tier
//                            and record it in DIR/acked (so the test knows what was promised)
//   crash_writer write-device DIR   the same with StarPU running and the data in vector
//                            handles made resident on the OpenCL devices (valid only there)
//                            before each checkpoint, captured by the device cache tier
//   crash_writer verify DIR  latest() must be >= the acked version and restore it with
//                            verified checksums and exactly the contents the writer generated
//   crash_writer write-slow-remote DIR   as write, with the remote tier throttled to 64 KiB/s
//                            (remote copies lag behind the local tier, as on a slow PFS)
//   crash_writer catch-up DIR   starts on DIR's tiers and finalizes: the start queues the
//                            versions the remote tier lacks, finalize waits for their copies
#include <hetpu/ckpt.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

size_t size_of(int64_t v, int region)
{
    return region == 0 ? 50000 + static_cast<size_t>(v * 7919 % 100000) : 1000 + static_cast<size_t>(v % 5000);
}

void fill(std::vector<unsigned char> &b, int64_t v, int region)
{
    uint64_t x = static_cast<uint64_t>(v) * 0x9E3779B97F4A7C15ull + region;
    for (auto &c : b) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<unsigned char>(x);
    }
}

int die(const char *what)
{
    std::fprintf(stderr, "crash_writer: %s: %s\n", what, hetpu_ckpt_last_error());
    return 1;
}

std::string config(const std::string &dir, bool device, bool slow_remote = false)
{
    return "versions_to_keep = 3\n[host]\nsize = \"256KiB\"\n[local]\npath = \"" + dir +
           "/local\"\n[remote]\npath = \"" + dir + "/remote\"\n" + (slow_remote ? "bandwidth = \"64KiB\"\n" : "") +
           (device ? "[device]\nsize = \"256KiB\"\nchunk = \"128KiB\"\nslot = \"32KiB\"\n" : "");
}

// A read-write task that changes nothing: StarPU moves the data onto the worker's device and
// invalidates every other copy, so the checkpoint finds it valid only on that device.
void nothing(void *[], void *) {}
struct starpu_codelet make_resident;

// Registers b as a vector handle, makes it resident on OpenCL worker `worker`, protects it.
starpu_data_handle_t resident(const char *region, std::vector<unsigned char> &b, unsigned worker)
{
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b.data()), b.size(), 1);
    struct starpu_task *t = starpu_task_create();
    t->cl = &make_resident;
    t->handles[0] = h;
    t->execute_on_a_specific_worker = 1;
    t->workerid = worker;
    if (starpu_task_submit(t) || hetpu_ckpt_protect(region, h))
        std::exit(die("make resident"));
    return h;
}

int64_t read_acked(const std::string &dir)
{
    FILE *f = std::fopen((dir + "/acked").c_str(), "r");
    long long v = -1;
    if (f) {
        if (std::fscanf(f, "%lld", &v) != 1)
            v = -1;
        std::fclose(f);
    }
    return v;
}

void write_acked(const std::string &dir, int64_t v)
{
    const std::string tmp = dir + "/acked.tmp";
    FILE *f = std::fopen(tmp.c_str(), "w");
    std::fprintf(f, "%" PRId64 "\n", v);
    std::fflush(f);
    fsync(fileno(f));
    std::fclose(f);
    std::rename(tmp.c_str(), (dir + "/acked").c_str());
}

int restore_and_check(int64_t v)
{
    std::vector<unsigned char> a(size_of(v, 0)), b(size_of(v, 1)), want;
    hetpu_ckpt_unprotect("a");
    hetpu_ckpt_unprotect("b");
    if (hetpu_ckpt_protect_buffer("a", a.data(), a.size()) || hetpu_ckpt_protect_buffer("b", b.data(), b.size()))
        return die("protect");
    if (hetpu_ckpt_restore("state", v))
        return die("restore");
    want.resize(a.size());
    fill(want, v, 0);
    if (want != a) {
        std::fprintf(stderr, "crash_writer: version %" PRId64 " region a differs\n", v);
        return 1;
    }
    want.resize(b.size());
    fill(want, v, 1);
    if (want != b) {
        std::fprintf(stderr, "crash_writer: version %" PRId64 " region b differs\n", v);
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    const std::string mode = argc == 3 ? argv[1] : "";
    if (mode != "write" && mode != "write-device" && mode != "write-slow-remote" && mode != "verify" &&
        mode != "catch-up") {
        std::fprintf(stderr, "usage: crash_writer write|write-device|write-slow-remote|verify|catch-up DIR\n");
        return 2;
    }
    const std::string dir = argv[2];
    const bool device = mode == "write-device";
    if (mode == "catch-up") {
        if (hetpu_ckpt_init_from_string(config(dir, false).c_str()))
            return die("init");
        return hetpu_ckpt_finalize() ? die("finalize") : 0;
    }
    std::vector<unsigned> opencl;
    if (device) {
        if (starpu_init(nullptr))
            return die("starpu_init");
        make_resident.where = STARPU_OPENCL;
        make_resident.opencl_funcs[0] = nothing;
        make_resident.nbuffers = 1;
        make_resident.modes[0] = STARPU_RW;
        for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
            if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_OPENCL_WORKER)
                opencl.push_back(w);
        if (opencl.size() < 2) {
            std::fprintf(stderr, "crash_writer: write-device needs two OpenCL devices\n");
            return 1;
        }
    }
    if (hetpu_ckpt_init_from_string(config(dir, device, mode == "write-slow-remote").c_str()))
        return die("init");
    int64_t latest = -1;
    const int have = hetpu_ckpt_latest("state", &latest);
    if (have && have != -ENOENT)
        return die("latest");
    if (mode == "verify") {
        const int64_t acked = read_acked(dir);
        if (have == -ENOENT) {
            if (acked >= 0) {
                std::fprintf(stderr, "crash_writer: acked %" PRId64 " but no version\n", acked);
                return 1;
            }
            std::printf("no version yet\n");
            return hetpu_ckpt_finalize() ? die("finalize") : 0;
        }
        if (latest < acked) {
            std::fprintf(stderr, "crash_writer: latest %" PRId64 " < acked %" PRId64 "\n", latest, acked);
            return 1;
        }
        if (restore_and_check(latest))
            return 1;
        std::printf("latest %" PRId64 " (acked %" PRId64 ") restored and verified\n", latest, acked);
        return hetpu_ckpt_finalize() ? die("finalize") : 0;
    }
    std::uint64_t device_rounds = 0;
    for (int64_t v = have ? 0 : latest + 1;; ++v) {
        std::vector<unsigned char> a(size_of(v, 0)), b(size_of(v, 1));
        fill(a, v, 0);
        fill(b, v, 1);
        hetpu_ckpt_unprotect("a");
        hetpu_ckpt_unprotect("b");
        starpu_data_handle_t ha = nullptr, hb = nullptr;
        if (device) {
            // Alternate devices so both caches, and peer transfers when one is full, are used.
            ha = resident("a", a, opencl[static_cast<size_t>(v) % 2]);
            hb = resident("b", b, opencl[static_cast<size_t>(v + 1) % 2]);
        } else if (hetpu_ckpt_protect_buffer("a", a.data(), a.size()) ||
                   hetpu_ckpt_protect_buffer("b", b.data(), b.size())) {
            return die("protect");
        }
        if (hetpu_ckpt_checkpoint("state", v))
            return die("checkpoint");
        if (device) {
            // The handles go away with this round's buffers: captured first.
            if (hetpu_ckpt_wait("state", v, HETPU_CKPT_TIER_DEVICE))
                return die("wait device");
            hetpu_ckpt_stats s{};
            if (hetpu_ckpt_get_stats(&s))
                return die("stats");
            ++device_rounds;
            if (s.device_path_captures != 2 * device_rounds || s.host_path_captures != 0) {
                std::fprintf(stderr, "crash_writer: %llu of %llu captures came from device memory\n",
                             static_cast<unsigned long long>(s.device_path_captures),
                             static_cast<unsigned long long>(2 * device_rounds));
                return 1;
            }
            hetpu_ckpt_unprotect("a");
            hetpu_ckpt_unprotect("b");
            starpu_data_unregister(ha);
            starpu_data_unregister(hb);
        }
        if (v % 4 == 3) {
            if (hetpu_ckpt_wait("state", v, HETPU_CKPT_TIER_LOCAL))
                return die("wait");
            write_acked(dir, v);
        }
    }
}
