// SPDX-License-Identifier: LGPL-2.1-or-later
// The assignment codelet's buffers and argument (kmeans_kernels.h), read the same way by the
// CPU and CUDA implementations. StarPU glue, header-only.
#pragma once

#include <starpu.h>

#include <cstdint>

#include "apps/kmeans/kmeans_kernels.h"

namespace hetpu::kmeans {

struct AssignBuffers {
    const double *x;          // the block's points
    const double *centroids;  // k * d
    double *partial;          // sums, counts, inertia
    int32_t *labels;          // one per point
    uint64_t count;           // points in the block
    uint32_t k, d;

    AssignBuffers(void *buffers[], void *arg)
        : x(reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[0]))),
          centroids(reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[1]))),
          partial(reinterpret_cast<double *>(STARPU_VECTOR_GET_PTR(buffers[2]))),
          labels(reinterpret_cast<int32_t *>(STARPU_VECTOR_GET_PTR(buffers[3]))),
          count(STARPU_VECTOR_GET_NX(buffers[3])), k(static_cast<const hetpu_kmeans_args *>(arg)->k),
          d(static_cast<const hetpu_kmeans_args *>(arg)->d)
    {}
};

}  // namespace hetpu::kmeans
