// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's DeviceMemory over StarPU's accelerator memory nodes (OpenCL, and CUDA in a
// CUDA build): cache chunks come from starpu_malloc_on_node_flags with STARPU_MALLOC_COUNT
// (StarPU's memory accounting and STARPU_LIMIT_*_MEM see them; a chunk over the limit is
// refused, never overflowed), copies go through each device's own queue or stream.
#pragma once

#include "hetpu/ckpt.h"

#include "ckpt_backend/engine/device_memory.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace hetpu::ckpt {

// One device per accelerator memory node, in memory node order; `nodes` receives the
// StarPU memory node of each device. Null when StarPU has no accelerator memory node.
// headroom: device memory (StarPU's accounting) the cache leaves free, and gives chunks back
// to keep free. Chunks are also memory-only reservations with the MGB arbiter
// (starpu_cache_arbiter.h).
std::unique_ptr<DeviceMemory> make_starpu_device_memory(std::vector<unsigned> *nodes, std::uint64_t headroom);

// Size of a handle's data as one block of bytes (vector, variable, unpadded matrix), or 0
// when its layout is not one block.
std::size_t contiguous_size(starpu_data_handle_t h);
// The driver buffer (cl_mem or device pointer) and byte offset of a handle's copy on `node`
// (a handle contiguous_size accepts).
void device_buffer(starpu_data_handle_t h, unsigned node, std::uintptr_t *base, std::uint64_t *offset);

}  // namespace hetpu::ckpt
