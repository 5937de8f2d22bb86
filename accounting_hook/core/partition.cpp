// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/partition.h"

#include <stdexcept>

namespace hetpu::accounting {

void validate(const Partition &p)
{
    const std::string where = "partition '" + p.name + "': ";
    if (p.cores_per_node <= 0)
        throw std::invalid_argument(where + "cores_per_node must be a positive integer");
    if (!(p.mem_gib_per_node > 0))
        throw std::invalid_argument(where + "mem_gib_per_node must be positive");
    if (p.cpu_sockets <= 0)
        throw std::invalid_argument(where + "cpu_sockets must be a positive integer");
    if (p.cpu_tdp_w < 0 || p.gpu_tdp_w < 0 || p.cpu_peak_flops < 0 || p.gpu_peak_flops < 0 || p.gpu_sms < 0)
        throw std::invalid_argument(where + "TDPs, SM counts and peak FLOP rates cannot be negative");
    if (p.gpus_per_node < 0)
        throw std::invalid_argument(where + "gpus_per_node cannot be negative");
    if (p.has_gpus()) {
        // Eq. 15 divides GPU TDP by CPU TDP: both are needed.
        if (!(p.gpu_tdp_w > 0))
            throw std::invalid_argument(where + "gpus_per_node > 0 needs gpu_tdp_w (watts per GPU)");
        if (!(p.cpu_tdp_w > 0))
            throw std::invalid_argument(where +
                                        "a GPU partition needs cpu_tdp_w (watts per CPU socket) for its weight");
    }
}

}  // namespace hetpu::accounting
