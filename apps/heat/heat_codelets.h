// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu-heat's two codelets, CPU, OpenCL and CUDA (as built), computing the same bits:
//   sweep: block (RW), the row above it (R), the row below it (R), scratch (SCRATCH): one
//          Jacobi sweep of the block into the scratch buffer, then copied back, on the
//          block's device;
//   edges: block (R), its first row (W), its last row (W): the halos its neighbours read in
//          the next sweep (StarPU moves these small handles between devices).
#pragma once

#include <starpu.h>

#include "apps/heat/heat_kernels.h"
#include "config.h"

extern "C" void hetpu_heat_cpu_sweep(void *buffers[], void *arg);
extern "C" void hetpu_heat_cpu_edges(void *buffers[], void *arg);
#ifdef HETPU_HAVE_OPENCL
int hetpu_heat_opencl_init();  // builds the kernels on every OpenCL device; 0 or -errno
void hetpu_heat_opencl_shutdown();
extern "C" void hetpu_heat_opencl_sweep(void *buffers[], void *arg);
extern "C" void hetpu_heat_opencl_edges(void *buffers[], void *arg);
#endif
#ifdef HETPU_HAVE_CUDA
extern "C" void hetpu_heat_cuda_sweep(void *buffers[], void *arg);  // heat_cuda.cu
extern "C" void hetpu_heat_cuda_edges(void *buffers[], void *arg);
#endif

namespace hetpu::heat {

int codelets_init();
void codelets_shutdown();

// One task on `worker` each (the caller keeps every block on one device).
int submit_sweep(starpu_data_handle_t block, starpu_data_handle_t above, starpu_data_handle_t below,
                 starpu_data_handle_t scratch, const hetpu_heat_args &args, int worker);
int submit_edges(starpu_data_handle_t block, starpu_data_handle_t top, starpu_data_handle_t bottom, int worker);

}  // namespace hetpu::heat
