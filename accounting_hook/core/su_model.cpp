// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/su_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hetpu::accounting {

double NodeFractions::max() const { return std::max({cores, gpus, memory}); }

double energy_weight(const Partition &p)
{
    validate(p);
    const double c = p.cores_per_node;
    if (!p.has_gpus())
        return c;
    return p.node_gpu_tdp_w() / p.node_cpu_tdp_w() * c;
}

double memory_fraction(double used_gib, double total_gib, int cores_per_node)
{
    if (!(total_gib > 0) || cores_per_node <= 0)
        throw std::invalid_argument("memory_fraction: total memory and cores per node must be positive");
    if (used_gib < 0 || std::isnan(used_gib))
        throw std::invalid_argument("memory_fraction: memory used cannot be negative");
    if (used_gib == 0)
        return 0;
    const double per_core = total_gib / cores_per_node;
    // A tiny relative slack keeps an exact multiple (e.g. 2 shares computed as 2.0000000001)
    // from being charged one share more.
    double shares = std::ceil(used_gib / per_core * (1 - 1e-12));
    shares = std::min<double>(std::max(shares, 1.0), cores_per_node);
    return shares / cores_per_node;
}

NodeFractions node_fractions(const Partition &p, double cores, double gpus, double mem_gib)
{
    validate(p);
    const std::string where = "partition '" + p.name + "': ";
    if (cores < 0 || gpus < 0 || mem_gib < 0)
        throw std::invalid_argument(where + "cores, GPUs and memory cannot be negative");
    if (cores > p.cores_per_node)
        throw std::invalid_argument(where + "a job cannot hold " + std::to_string(cores) + " cores of a " +
                                    std::to_string(p.cores_per_node) + "-core node");
    if (gpus > p.gpus_per_node)
        throw std::invalid_argument(where + "a job cannot hold " + std::to_string(gpus) + " GPUs of a node with " +
                                    std::to_string(p.gpus_per_node));
    if (mem_gib > p.mem_gib_per_node * (1 + 1e-9))
        throw std::invalid_argument(where + "a job cannot hold more memory than the node's " +
                                    std::to_string(p.mem_gib_per_node) + " GiB");
    NodeFractions f;
    f.cores = cores / p.cores_per_node;
    f.gpus = p.has_gpus() ? gpus / p.gpus_per_node : 0;
    f.memory = memory_fraction(mem_gib, p.mem_gib_per_node, p.cores_per_node);
    return f;
}

double cost(double weight, double hours, const std::vector<NodeFractions> &nodes)
{
    if (weight < 0 || hours < 0 || std::isnan(weight) || std::isnan(hours))
        throw std::invalid_argument("cost: weight and hours cannot be negative");
    double sum = 0;
    for (const NodeFractions &f : nodes)
        sum += f.max();
    return weight * hours * sum;
}

double cost(double weight, double hours, const NodeFractions &per_node, int nodes)
{
    if (nodes < 0)
        throw std::invalid_argument("cost: node count cannot be negative");
    return cost(weight, hours, std::vector<NodeFractions>(static_cast<size_t>(nodes), per_node));
}

}  // namespace hetpu::accounting
