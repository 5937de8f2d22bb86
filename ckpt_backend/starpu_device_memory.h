// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's DeviceMemory over StarPU's accelerator memory nodes (OpenCL, and CUDA in a
// CUDA build): cache chunks come from starpu_malloc_on_node_flags with STARPU_MALLOC_COUNT
// (StarPU's memory accounting and STARPU_LIMIT_*_MEM see them; a chunk over the limit is
// refused, never overflowed), copies go through each device's own queue or stream.
#pragma once

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

}  // namespace hetpu::ckpt
