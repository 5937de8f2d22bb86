// SPDX-License-Identifier: LGPL-2.1-or-later
// The Collective of a k-means run over the ranks of an MPI launch, on hetpu's own
// communicator (hetpu_mpi_gather to rank 0, then hetpu_mpi_bcast).
#pragma once

#include <hetpu/mpi.h>

#include "apps/kmeans/kmeans_collective.h"

namespace hetpu::kmeans {

class MpiCollective final : public Collective {
public:
    int rank() const override { return hetpu_mpi_rank(); }
    int size() const override { return hetpu_mpi_size(); }
    int all_gather(const void *mine, size_t bytes, std::vector<unsigned char> &all) override
    {
        all.resize(bytes * static_cast<size_t>(size()));
        if (int rc = hetpu_mpi_gather(mine, bytes, all.data()); rc != 0)
            return rc;
        return hetpu_mpi_bcast(all.data(), all.size());
    }
};

}  // namespace hetpu::kmeans
