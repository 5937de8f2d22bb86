// SPDX-License-Identifier: LGPL-2.1-or-later
// A host buffer page-locked for the lifetime of the object while StarPU drives CUDA
// workers, so that its copies to and from a GPU are DMA transfers StarPU can run
// asynchronously and overlap with computation. From pageable memory a CUDA copy is staged
// by the driver through a bounce buffer: on one H200 node, k-means blocks of 1M points
// (64 MB) spent ~10 ms copying their points to the GPU, more than the 8 ms their kernels
// took. Without CUDA workers (or a StarPU built without CUDA) it does nothing: pinning
// costs time and locked memory that nothing would use.
#pragma once

#include <starpu.h>

#include <cstddef>

namespace hetpu::apps {

class PinnedHostMemory {
public:
    // Call after starpu_init(); the buffer must outlive the object and not move.
    PinnedHostMemory(const void *data, size_t bytes)
    {
#ifdef STARPU_USE_CUDA
        void *p = const_cast<void *>(data);  // page-locking does not write the buffer
        if (p && bytes > 0 && starpu_cuda_worker_get_count() > 0 && starpu_memory_pin(p, bytes) == 0) {
            data_ = p;
            bytes_ = bytes;
        }
#else
        (void)data;
        (void)bytes;
#endif
    }
    ~PinnedHostMemory()
    {
#ifdef STARPU_USE_CUDA
        if (data_)
            starpu_memory_unpin(data_, bytes_);
#endif
    }
    PinnedHostMemory(const PinnedHostMemory &) = delete;
    PinnedHostMemory &operator=(const PinnedHostMemory &) = delete;

    bool pinned() const { return data_ != nullptr; }

private:
    void *data_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace hetpu::apps
