// SPDX-License-Identifier: LGPL-2.1-or-later
// Eq. 1, Eq. 9 (with the erratum fixed) and Eq. 15 of the accounting paper.
#include <gtest/gtest.h>

#include <stdexcept>

#include "accounting_hook/core/su_model.h"

using namespace hetpu::accounting;

namespace {

Partition cpu_node()
{
    Partition p;
    p.name = "cpu";
    p.cores_per_node = 36;
    p.mem_gib_per_node = 360;  // 10 GiB per core
    p.cpu_sockets = 2;
    p.cpu_tdp_w = 150;
    return p;
}

Partition gpu_node()
{
    Partition p = cpu_node();
    p.name = "gpu";
    p.gpus_per_node = 4;
    p.gpu_tdp_w = 400;
    return p;
}

}  // namespace

TEST(SuModel, CpuPartitionWeightIsCoresPerNode) { EXPECT_DOUBLE_EQ(energy_weight(cpu_node()), 36); }

TEST(SuModel, GpuPartitionWeightIsTdpRatioTimesCores)
{
    EXPECT_DOUBLE_EQ(energy_weight(gpu_node()), 1600.0 / 300.0 * 36);  // Eq. 26: 192
    Partition setonix;  // a Setonix-like node: 1 x 280 W CPU, 4 x 560 W GPUs, 64 cores
    setonix.name = "gpu";
    setonix.cores_per_node = 64;
    setonix.mem_gib_per_node = 256;
    setonix.cpu_tdp_w = 280;
    setonix.gpus_per_node = 4;
    setonix.gpu_tdp_w = 560;
    EXPECT_DOUBLE_EQ(energy_weight(setonix), 4 * 560.0 / 280.0 * 64);
}

TEST(SuModel, MemoryFractionIsWholePerCoreSharesOverCores)
{
    // 10 GiB per core: 1 byte is one share, 10 GiB one share, 10.5 GiB two, 360 GiB all.
    EXPECT_DOUBLE_EQ(memory_fraction(1e-9, 360, 36), 1.0 / 36);
    EXPECT_DOUBLE_EQ(memory_fraction(10, 360, 36), 1.0 / 36);
    EXPECT_DOUBLE_EQ(memory_fraction(10.5, 360, 36), 2.0 / 36);
    EXPECT_DOUBLE_EQ(memory_fraction(95, 360, 36), 10.0 / 36);
    EXPECT_DOUBLE_EQ(memory_fraction(360, 360, 36), 1.0);
    EXPECT_DOUBLE_EQ(memory_fraction(0, 360, 36), 0.0);
    // The erratum: the printed Eq. 9 gives the share count (10), not a fraction of the node.
    EXPECT_LE(memory_fraction(95, 360, 36), 1.0);
    EXPECT_THROW(memory_fraction(-1, 360, 36), std::invalid_argument);
    EXPECT_THROW(memory_fraction(1, 0, 36), std::invalid_argument);
}

TEST(SuModel, CostIsWeightTimesHoursTimesSumOfLargestFractions)
{
    Partition p = cpu_node();
    // Compute-bound: 9 cores, 20 GiB (2 shares) for 2 h -> 9 core-hours x 2 = 18 SU (Eq. 3).
    NodeFractions f = node_fractions(p, 9, 0, 20);
    EXPECT_DOUBLE_EQ(f.cores, 0.25);
    EXPECT_DOUBLE_EQ(f.memory, 2.0 / 36);
    EXPECT_DOUBLE_EQ(cost(energy_weight(p), 2, f, 1), 18);
    // Memory-bound: 1 core, 100 GiB (10 shares) for 1 h -> charged as 10 cores (Eq. 6-7).
    EXPECT_DOUBLE_EQ(cost(energy_weight(p), 1, node_fractions(p, 1, 0, 100), 1), 10);
    // Heterogeneous job: the largest fraction per node, summed over nodes.
    std::vector<NodeFractions> nodes = {node_fractions(p, 36, 0, 1), node_fractions(p, 1, 0, 180)};
    EXPECT_DOUBLE_EQ(cost(36, 1, nodes), 36 + 18);
    // n = C = t = 1: one SU is one core-hour.
    Partition one = p;
    one.cores_per_node = 1;
    one.mem_gib_per_node = 4;
    EXPECT_DOUBLE_EQ(cost(energy_weight(one), 1, node_fractions(one, 1, 0, 1), 1), 1);
}

TEST(SuModel, GpuJobChargedByItsLargestShare)
{
    Partition p = gpu_node();
    // 1 of 4 GPUs with 4 of 36 cores for 1 h: a quarter of a 192-SU node-hour.
    NodeFractions f = node_fractions(p, 4, 1, 10);
    EXPECT_DOUBLE_EQ(f.gpus, 0.25);
    EXPECT_DOUBLE_EQ(cost(energy_weight(p), 1, f, 1), 48);
    EXPECT_DOUBLE_EQ(cost(energy_weight(p), 0.5, f, 2), 48);
}

TEST(SuModel, RejectsWhatANodeCannotHold)
{
    Partition p = cpu_node();
    EXPECT_THROW(node_fractions(p, 37, 0, 1), std::invalid_argument);
    EXPECT_THROW(node_fractions(p, 1, 1, 1), std::invalid_argument);
    EXPECT_THROW(node_fractions(p, 1, 0, 361), std::invalid_argument);
    EXPECT_THROW(cost(36, -1, NodeFractions{}, 1), std::invalid_argument);
    Partition bad = gpu_node();
    bad.gpu_tdp_w = 0;
    EXPECT_THROW(energy_weight(bad), std::invalid_argument);
    bad = gpu_node();
    bad.cpu_tdp_w = 0;
    EXPECT_THROW(energy_weight(bad), std::invalid_argument);
}
