// SPDX-License-Identifier: LGPL-2.1-or-later
// Application blocking per checkpoint of device-resident data: the device cache tier
// (captured device to device) against the host tier (StarPU first brings the data back to
// main memory, then it is copied into the host cache), in the same run on the same node.
//
//   ckpt_device [--handles-per-device 2] [--mib 4] [--checkpoints 8] [--segments 4] [--json FILE]
//
// Needs accelerator memory nodes: the CUDA devices of a GPU machine in a CUDA build
// (bench/gpu_node.sh's ckpt phase), or bench/ckpt_device.sh on a CPU-only machine (two PoCL
// OpenCL devices). Each round runs one task per handle on its device (the data is
// then valid only there), waits for the tasks, and times hetpu_ckpt_checkpoint until the
// capture is done (wait DEVICE, resp. HOST): what a later writer of the data waits for. The
// disk flushes of a round finish before the next round starts (not timed), so both tiers are
// measured on a quiet node. The tiers alternate in segments (host, device, host, device, ...)
// of `checkpoints` rounds each, so a drift of a shared machine hits both alike; the medians
// pool every segment, and the per-segment ratios show the spread.
#include "bench/ckpt_bench_node.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <sys/stat.h>
#include <vector>

#ifdef HETPU_BENCH_CKPT_CUDA
#include <cuda_runtime.h>
#endif

using hetpu::bench::median;

namespace {

void add_one_cpu(void *buffers[], void *)
{
    float *y = reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); ++i)
        y[i] += 1.0f;
}

#ifdef STARPU_USE_OPENCL
// A write of the whole buffer on the device (from a host pattern: no kernel to compile;
// StarPU's OpenCL headers are 1.1, without clEnqueueFillBuffer).
void touch_opencl(void *buffers[], void *)
{
    cl_mem y = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    const size_t n = STARPU_VECTOR_GET_NX(buffers[0]);
    thread_local std::vector<float> pattern;
    pattern.assign(n, 1.0f);
    cl_command_queue queue;
    starpu_opencl_get_current_queue(&queue);
    if (clEnqueueWriteBuffer(queue, y, CL_TRUE, STARPU_VECTOR_GET_OFFSET(buffers[0]), n * sizeof(float), pattern.data(),
                             0, nullptr, nullptr) != CL_SUCCESS)
        std::abort();
}
#endif

#ifdef HETPU_BENCH_CKPT_CUDA
// The same on a CUDA device: a copy from a host pattern on the worker's stream.
void touch_cuda(void *buffers[], void *)
{
    float *y = reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const size_t n = STARPU_VECTOR_GET_NX(buffers[0]);
    thread_local std::vector<float> pattern;
    pattern.assign(n, 1.0f);
    cudaStream_t stream = starpu_cuda_get_local_stream();
    if (cudaMemcpyAsync(y, pattern.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
        std::abort();
}
#endif

struct starpu_codelet touch_codelet;

struct Result {
    std::vector<double> blocking_s;
    hetpu_ckpt_stats stats{};
};

Result run(const std::string &dir, bool device_tier, const std::vector<starpu_data_handle_t> &handles,
           const std::vector<int> &worker_of, int checkpoints, size_t bytes_each)
{
    const size_t total = bytes_each * handles.size();
    std::string cfg = "[host]\nsize = \"" + std::to_string(2 * total) +
                      "\"\nincremental_init = false\n[local]\npath = \"" + dir + "\"\n";
    if (device_tier)
        cfg += "[device]\nsize = \"" + std::to_string(2 * total) + "\"\nchunk = \"" + std::to_string(bytes_each) +
               "\"\nslot = \"1MiB\"\n";
    if (hetpu_ckpt_init_from_string(cfg.c_str())) {
        std::fprintf(stderr, "ckpt_device: %s\n", hetpu_ckpt_last_error());
        std::exit(1);
    }
    for (size_t i = 0; i < handles.size(); ++i)
        hetpu_ckpt_protect(("h" + std::to_string(i)).c_str(), handles[i]);
    Result r;
    // Measured once the device caches are fully allocated.
    r.stats = hetpu::bench::wait_device_caches_grown();
    for (int v = 0; v < checkpoints; ++v) {
        for (size_t i = 0; i < handles.size(); ++i) {
            struct starpu_task *t = starpu_task_create();
            t->cl = &touch_codelet;
            t->handles[0] = handles[i];
            t->execute_on_a_specific_worker = 1;
            t->workerid = static_cast<unsigned>(worker_of[i]);
            if (starpu_task_submit(t))
                std::exit(1);
        }
        starpu_task_wait_for_all();
        const auto t0 = std::chrono::steady_clock::now();
        if (hetpu_ckpt_checkpoint("bench", v) ||
            hetpu_ckpt_wait("bench", v, device_tier ? HETPU_CKPT_TIER_DEVICE : HETPU_CKPT_TIER_HOST)) {
            std::fprintf(stderr, "ckpt_device: %s\n", hetpu_ckpt_last_error());
            std::exit(1);
        }
        r.blocking_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (hetpu_ckpt_wait("bench", v, HETPU_CKPT_TIER_LOCAL)) {
            std::fprintf(stderr, "ckpt_device: %s\n", hetpu_ckpt_last_error());
            std::exit(1);
        }
    }
    hetpu_ckpt_get_stats(&r.stats);
    for (size_t i = 0; i < handles.size(); ++i)
        hetpu_ckpt_unprotect(("h" + std::to_string(i)).c_str());
    hetpu_ckpt_finalize();
    return r;
}

}  // namespace

int main(int argc, char **argv)
{
    int per_device = 2, mib = 4, checkpoints = 8, segments = 4;
    const char *json = nullptr;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--handles-per-device")
            per_device = std::atoi(argv[i + 1]);
        else if (k == "--mib")
            mib = std::atoi(argv[i + 1]);
        else if (k == "--checkpoints")
            checkpoints = std::atoi(argv[i + 1]);
        else if (k == "--segments")
            segments = std::atoi(argv[i + 1]);
        else if (k == "--json")
            json = argv[i + 1];
        else {
            std::fprintf(stderr, "ckpt_device: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (starpu_init(nullptr))
        return 1;
    touch_codelet.where = STARPU_CPU | STARPU_OPENCL;
    touch_codelet.cpu_funcs[0] = add_one_cpu;
#ifdef STARPU_USE_OPENCL
    touch_codelet.opencl_funcs[0] = touch_opencl;
#endif
#ifdef HETPU_BENCH_CKPT_CUDA
    touch_codelet.where |= STARPU_CUDA;
    touch_codelet.cuda_funcs[0] = touch_cuda;
#endif
    touch_codelet.nbuffers = 1;
    touch_codelet.modes[0] = STARPU_W;
    const std::vector<int> devices = hetpu::bench::accelerator_workers();
    if (devices.empty()) {
        std::fprintf(stderr, "ckpt_device: no OpenCL or CUDA device (run bench/ckpt_device.sh for two PoCL devices)\n");
        starpu_shutdown();
        return 77;
    }
    const size_t n = static_cast<size_t>(mib) << 18;  // floats
    std::vector<std::vector<float>> data(devices.size() * static_cast<size_t>(per_device), std::vector<float>(n, 0));
    std::vector<starpu_data_handle_t> handles(data.size());
    std::vector<int> worker_of(data.size());
    for (size_t i = 0; i < data.size(); ++i) {
        starpu_vector_data_register(&handles[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data[i].data()), n,
                                    sizeof(float));
        worker_of[i] = devices[i % devices.size()];
    }
    char tmpl[] = "/tmp/hetpu-ckpt-device-bench.XXXXXX";
    if (!::mkdtemp(tmpl))
        return 1;
    const std::string base = tmpl;
    ::mkdir((base + "/dev").c_str(), 0755);
    ::mkdir((base + "/host").c_str(), 0755);
    std::vector<double> host_all, dev_all, ratios;
    hetpu_ckpt_stats dev_stats{};
    for (int seg = 0; seg < segments; ++seg) {
        std::system(("rm -rf '" + base + "/host'/* '" + base + "/dev'/*").c_str());
        const Result h = run(base + "/host", false, handles, worker_of, checkpoints, n * sizeof(float));
        const Result d = run(base + "/dev", true, handles, worker_of, checkpoints, n * sizeof(float));
        host_all.insert(host_all.end(), h.blocking_s.begin(), h.blocking_s.end());
        dev_all.insert(dev_all.end(), d.blocking_s.begin(), d.blocking_s.end());
        ratios.push_back(median(h.blocking_s) / median(d.blocking_s));
        hetpu::bench::add_capture_stats(dev_stats, d.stats);
    }
    for (starpu_data_handle_t h : handles)
        starpu_data_unregister(h);
    starpu_shutdown();
    std::system(("rm -rf '" + base + "'").c_str());

    const double hm = median(host_all), dm = median(dev_all);
    std::sort(ratios.begin(), ratios.end());
    std::printf("devices %zu, %zu handles of %d MiB (%d MiB per checkpoint), %d segments of %d checkpoints per tier\n",
                devices.size(), data.size(), mib, static_cast<int>(data.size()) * mib, segments, checkpoints);
    std::printf("median blocking per checkpoint: host tier %.2f ms, device tier %.2f ms: ratio %.2f "
                "(per segment %.2f .. %.2f)\n",
                hm * 1e3, dm * 1e3, hm / dm, ratios.front(), ratios.back());
    std::printf("device runs: %llu bytes captured device to device, %llu to peers, %llu device-to-host before "
                "resuming; %llu handles captured from device memory, %llu from main memory\n",
                static_cast<unsigned long long>(dev_stats.device_local_bytes),
                static_cast<unsigned long long>(dev_stats.device_peer_bytes),
                static_cast<unsigned long long>(dev_stats.device_to_host_at_capture_bytes),
                static_cast<unsigned long long>(dev_stats.device_path_captures),
                static_cast<unsigned long long>(dev_stats.host_path_captures));
    std::printf("device runs: copying took %.2f ms per checkpoint (the rest of the blocking is acquisition, "
                "hand-over between threads and wake-ups)\n",
                1e3 * dev_stats.device_capture_copy_s / static_cast<double>(dev_all.size()));
    if (json) {
        FILE *f = std::fopen(json, "a");
        if (f) {
            std::fprintf(f,
                         "{\"bench\":\"ckpt_device\",\"devices\":%zu,\"handles\":%zu,\"mib_each\":%d,\"segments\":%d,"
                         "\"checkpoints\":%d,\"host_median_s\":%.6f,\"device_median_s\":%.6f,\"ratio\":%.3f,"
                         "\"ratio_min\":%.3f,\"ratio_max\":%.3f,\"device_to_host_at_capture_bytes\":%llu}\n",
                         devices.size(), data.size(), mib, segments, checkpoints, hm, dm, hm / dm, ratios.front(),
                         ratios.back(), static_cast<unsigned long long>(dev_stats.device_to_host_at_capture_bytes));
            std::fclose(f);
        }
    }
    return 0;
}
