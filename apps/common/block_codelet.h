// SPDX-License-Identifier: LGPL-2.1-or-later
// The codelet of an app's divisible block, which every app builds the same way: a
// history-based performance model under the codelet's name (so each block size is
// calibrated on its own), a named CPU function, the OpenCL and CUDA functions the app was
// built with (CUDA ones asynchronous: StarPU synchronises the worker's stream after them),
// the buffers' access modes, and what a block asks of a GPU (for the mgb policies).
// StarPU glue, header-only.
#pragma once

#include <hetpu/gpu_needs.h>
#include <starpu.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace hetpu::apps {

struct BlockCodelet {
    const char *name = nullptr;  // the codelet's and its model's symbol
    starpu_cpu_func_t cpu = nullptr;
    const char *cpu_name = nullptr;         // the CPU function's symbol
    starpu_opencl_func_t opencl = nullptr;  // null: not built with OpenCL
    starpu_cuda_func_t cuda = nullptr;      // null: not built with CUDA
    std::vector<enum starpu_data_access_mode> modes;
    // The CPU function runs OpenMP threads on as many cores as StarPU combines for it.
    bool forkjoin = false;
    // Null: StarPU's footprint (the buffers' sizes).
    uint32_t (*footprint)(struct starpu_task *) = nullptr;
    void (*gpu_needs)(struct starpu_task *, struct hetpu_gpu_needs *) = nullptr;
    // The app's OpenCL set-up (its kernels built) and its release; null when there is none.
    int (*opencl_init)() = nullptr;
    void (*opencl_shutdown)() = nullptr;
};

// A kernel of one thread per item in blocks of 128 (the apps' CUDA launches), as the mgb
// policies count it: ceil(items / 128) blocks.
inline void one_thread_per_item(uint64_t items, struct hetpu_gpu_needs *needs)
{
    needs->blocks = static_cast<unsigned>(std::min<uint64_t>((items + 127) / 128, UINT_MAX));
    needs->threads_per_block = 128;
}

// `model` and `cl` must outlive every task (they are usually statics of the app).
inline void fill_block_codelet(struct starpu_codelet &cl, struct starpu_perfmodel &model, const BlockCodelet &b)
{
    model.type = STARPU_HISTORY_BASED;
    model.symbol = b.name;
    model.footprint = b.footprint;
    starpu_codelet_init(&cl);
    cl.name = b.name;
    if (b.forkjoin)
        cl.type = STARPU_FORKJOIN;
    cl.max_parallelism = b.forkjoin ? INT_MAX : 1;
    cl.cpu_funcs[0] = b.cpu;
    cl.cpu_funcs_name[0] = b.cpu_name;
    cl.opencl_funcs[0] = b.opencl;
    cl.cuda_funcs[0] = b.cuda;
    if (b.cuda)
        cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
    cl.nbuffers = static_cast<int>(b.modes.size());
    for (std::size_t i = 0; i < b.modes.size(); ++i)
        cl.modes[i] = b.modes[i];
    cl.model = &model;
    if (b.gpu_needs)
        hetpu_codelet_set_gpu_needs(&cl, b.gpu_needs);
}

// An app's block codelet and its model, built on first use and torn down by shutdown(). A
// static of the app: both must outlive every task.
class AppBlockCodelet {
public:
    // Builds the codelet from `b` (after b.opencl_init, whose error it returns); later calls
    // return 0 until shutdown().
    int init(const BlockCodelet &b)
    {
        if (ready_)
            return 0;
        if (b.opencl_init)
            if (int rc = b.opencl_init(); rc != 0)
                return rc;
        fill_block_codelet(codelet_, model_, b);
        opencl_shutdown_ = b.opencl_shutdown;
        ready_ = true;
        return 0;
    }
    void shutdown()
    {
        if (ready_ && opencl_shutdown_)
            opencl_shutdown_();
        ready_ = false;
    }
    struct starpu_codelet *codelet() { return &codelet_; }

private:
    struct starpu_codelet codelet_ {};
    struct starpu_perfmodel model_ {};
    void (*opencl_shutdown_)() = nullptr;
    bool ready_ = false;
};

}  // namespace hetpu::apps
