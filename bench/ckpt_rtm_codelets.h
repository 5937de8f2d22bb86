// SPDX-License-Identifier: LGPL-2.1-or-later
// The two codelets of bench/ckpt_rtm_device, each with a CPU, an OpenCL and (in a CUDA build)
// a CUDA implementation computing the same bits:
//   step:  one time step of a wavefield block, in place (the forward pass);
//   image: the backward pass's imaging of a restored block: adds it into its device's image
//          and writes the block's digest (ckpt_rtm_kernels.h), so every restored version is
//          checked without bringing the block back to main memory.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <cstdint>

namespace hetpu::bench {

// Builds the OpenCL program on every OpenCL device (nothing without one). 0 or -errno.
int rtm_codelets_load();
void rtm_codelets_unload();

// Submits one task on `worker`: block (RW) one step further. base: the block's first element
// in the wavefield.
int rtm_submit_step(starpu_data_handle_t block, int worker, uint64_t base, uint32_t step);

// When the last step task finished its computation, in nanoseconds of std::chrono::steady_clock
// (0 before any). Noted inside the task, so before StarPU releases its data: a checkpoint
// ordered after the task cannot start before it.
int64_t rtm_last_step_finished_ns();

// Submits one task on `worker`: image += block, digest[0] = the block's digest. block: R,
// image: RW (as many floats as the block), digest: W (a vector of one uint64_t).
int rtm_submit_image(starpu_data_handle_t block, starpu_data_handle_t image, starpu_data_handle_t digest, int worker,
                     uint64_t base);

// The same on the host: the reference the restored versions are checked against.
void rtm_step_host(float *y, std::size_t n, uint64_t base, uint32_t step);
uint64_t rtm_digest_host(const float *y, std::size_t n, uint64_t base);

}  // namespace hetpu::bench
