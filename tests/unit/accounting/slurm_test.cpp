// SPDX-License-Identifier: LGPL-2.1-or-later
// Slurm's TRESBillingWeights (with and without MAX_TRES) and the SLURM_* allocation.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "accounting_hook/core/slurm_allocation.h"
#include "accounting_hook/core/slurm_billing.h"
#include "accounting_hook/core/su_model.h"

using namespace hetpu::accounting;

namespace {

hetpu::EnvLookup env_of(const std::map<std::string, std::string> &vars)
{
    return [vars](const char *name) -> const char * {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

Partition setonix_gpu()
{
    Partition p;
    p.name = "gpu";
    p.cores_per_node = 64;
    p.mem_gib_per_node = 256;
    p.cpu_tdp_w = 280;
    p.gpus_per_node = 4;
    p.gpu_tdp_w = 560;
    return p;
}

}  // namespace

TEST(SlurmBilling, ParsesSlurmSyntaxWithMemoryUnits)
{
    TresWeights w = parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=48");
    EXPECT_DOUBLE_EQ(w.cpu, 1.0);
    EXPECT_DOUBLE_EQ(w.mem_per_gib, 0.25);
    EXPECT_DOUBLE_EQ(w.gpu, 48);
    EXPECT_DOUBLE_EQ(parse_tres_billing_weights("mem=1").mem_per_gib, 1024);  // per MiB by default
    EXPECT_DOUBLE_EQ(parse_tres_billing_weights("Mem=2T").mem_per_gib, 2.0 / 1024);
    EXPECT_DOUBLE_EQ(parse_tres_billing_weights("\"GRES/gpu:a100=3\"").gpu, 3);
    EXPECT_THROW(parse_tres_billing_weights("CPU"), std::invalid_argument);
    EXPECT_THROW(parse_tres_billing_weights("CPU=x"), std::invalid_argument);
    EXPECT_THROW(parse_tres_billing_weights("Licenses=2"), std::invalid_argument);
    EXPECT_THROW(parse_tres_billing_weights("CPU=2G"), std::invalid_argument);
    EXPECT_THROW(parse_tres_billing_weights("CPU=-1"), std::invalid_argument);
}

TEST(SlurmBilling, MaxTresTakesTheLargestNodeTresSumAddsThem)
{
    TresWeights w{1.0, 0.25, 48};
    EXPECT_DOUBLE_EQ(slurm_billing(w, 8, 64, 1, true), 48);
    EXPECT_DOUBLE_EQ(slurm_billing(w, 8, 64, 1, false), 8 + 16 + 48);
}

TEST(SlurmBilling, EquivalentWeightsReproduceTheModelUnderMaxTres)
{
    Partition p = setonix_gpu();
    TresWeights w = equivalent_tres_weights(p);
    const double node_hour = energy_weight(p);  // 512
    EXPECT_DOUBLE_EQ(w.cpu, node_hour / 64);
    EXPECT_DOUBLE_EQ(w.gpu, node_hour / 4);
    // Memory in whole per-core shares (4 GiB each) so the model's rounding does not differ.
    for (auto [cores, mem, gpus] :
         {std::tuple{8.0, 32.0, 1.0}, std::tuple{2.0, 128.0, 1.0}, std::tuple{64.0, 4.0, 0.0}}) {
        double model = cost(node_hour, 1, node_fractions(p, cores, gpus, mem), 1);
        EXPECT_NEAR(slurm_billing(w, cores, mem, gpus, true), model, 1e-9) << cores << " " << mem << " " << gpus;
    }
    EXPECT_EQ(format_tres_billing_weights(w), "CPU=8,Mem=2G,GRES/gpu=128");
    TresWeights back = parse_tres_billing_weights(format_tres_billing_weights(w));
    EXPECT_DOUBLE_EQ(back.mem_per_gib, w.mem_per_gib);
}

TEST(SlurmAllocation, AbsentOutsideSlurm)
{
    EXPECT_FALSE(read_slurm_allocation(env_of({{"SLURM_CPUS_ON_NODE", "4"}})));
}

TEST(SlurmAllocation, ReadsNodesCpusMemoryAndGpus)
{
    auto a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "4242"},
                                           {"SLURM_JOB_PARTITION", "gpu"},
                                           {"SLURM_JOB_NUM_NODES", "2"},
                                           {"SLURM_CPUS_ON_NODE", "16"},
                                           {"SLURM_MEM_PER_NODE", "65536"},
                                           {"SLURM_JOB_GPUS", "0,1"},
                                           {"SLURM_PROCID", "1"}}));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->procid, 1);
    EXPECT_EQ(a->job_id, "4242");
    EXPECT_EQ(a->partition, "gpu");
    EXPECT_EQ(a->nodes, 2);
    EXPECT_EQ(a->cpus_per_node, 16);
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 64);
    EXPECT_EQ(a->gpus_per_node, 2);
    auto b = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "1"},
                                           {"SLURM_NNODES", "3"},
                                           {"SLURM_CPUS_ON_NODE", "4"},
                                           {"SLURM_MEM_PER_CPU", "2048"},
                                           {"SLURM_GPUS_PER_NODE", "a100:3"}}));
    ASSERT_TRUE(b);
    EXPECT_EQ(b->nodes, 3);
    EXPECT_DOUBLE_EQ(b->mem_gib_per_node, 8);
    EXPECT_EQ(b->gpus_per_node, 3);
    EXPECT_EQ(
        read_slurm_allocation(env_of({{"SLURM_JOB_ID", "1"}, {"SLURM_GPUS_ON_NODE", "1"}, {"SLURM_JOB_GPUS", "0,1"}}))
            ->gpus_per_node,
        1);
}

TEST(SlurmAllocation, MalformedVariableIsNamed)
{
    try {
        read_slurm_allocation(env_of({{"SLURM_JOB_ID", "1"}, {"SLURM_CPUS_ON_NODE", "lots"}}));
        FAIL() << "accepted SLURM_CPUS_ON_NODE=lots";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("SLURM_CPUS_ON_NODE"), std::string::npos);
    }
}
