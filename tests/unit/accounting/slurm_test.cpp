// SPDX-License-Identifier: LGPL-2.1-or-later
// Slurm's TRESBillingWeights (with and without MAX_TRES) and the SLURM_* allocation.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "accounting_hook/core/slurm_allocation.h"
#include "accounting_hook/core/slurm_billing.h"
#include "accounting_hook/core/su_model.h"

using namespace hetpu::accounting;

namespace {

// Tests never ask a real Slurm.
const JobTresQuery no_query;

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

// Seen under a real Slurm 22.05: Slurm truncates the billing to an integer, and the
// weights printed to 6 digits, rounded down (Mem=0.0849616G for a 2-core, 24105 MB node),
// billed the whole node's memory 1 instead of 2. Printed rounded up, a whole node bills the
// model's weight, computed as Slurm does (MB x weight per GB / 1024, truncated).
TEST(SlurmBilling, PrintedWeightsNeverBillAWholeNodeBelowTheModel)
{
    for (int cores : {2, 3, 48, 64, 128}) {
        for (double mem_mb : {24105.0, 1000.0, 3079.0, 257000.0, 515481.0, 2096128.0}) {
            for (int gpus : {0, 2, 4}) {
                Partition p;
                p.name = "x";
                p.cores_per_node = cores;
                p.mem_gib_per_node = mem_mb / 1024;
                p.cpu_tdp_w = 100;
                p.gpus_per_node = gpus;
                p.gpu_tdp_w = 150;
                const double node_hour = energy_weight(p);
                const TresWeights w =
                    parse_tres_billing_weights(format_tres_billing_weights(equivalent_tres_weights(p)));
                const double slurm_mem = mem_mb * (w.mem_per_gib / 1024);
                EXPECT_GE(slurm_mem, node_hour) << cores << " cores " << mem_mb << " MB " << gpus << " GPUs";
                EXPECT_LT(slurm_mem - node_hour, 1e-6 * node_hour);
                EXPECT_GE(w.cpu * cores, node_hour);
                if (gpus) {
                    EXPECT_GE(w.gpu * gpus, node_hour);
                }
            }
        }
    }
    TresWeights w;
    w.cpu = 1, w.mem_per_gib = 2.0 / (24105 / 1024.0), w.gpu = 0;
    EXPECT_EQ(format_tres_billing_weights(w), "CPU=1,Mem=0.0849616263G");
}

TEST(SlurmAllocation, AbsentOutsideSlurm)
{
    EXPECT_FALSE(read_slurm_allocation(env_of({{"SLURM_CPUS_ON_NODE", "4"}}), no_query));
}

TEST(SlurmAllocation, ReadsNodesCpusMemoryAndGpus)
{
    auto a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "4242"},
                                           {"SLURM_JOB_PARTITION", "gpu"},
                                           {"SLURM_JOB_NUM_NODES", "2"},
                                           {"SLURM_CPUS_ON_NODE", "16"},
                                           {"SLURM_MEM_PER_NODE", "65536"},
                                           {"SLURM_JOB_GPUS", "0,1"},
                                           {"SLURM_PROCID", "1"}}),
                                   no_query);
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
                                           {"SLURM_GPUS_PER_NODE", "a100:3"}}),
                                   no_query);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->nodes, 3);
    EXPECT_DOUBLE_EQ(b->mem_gib_per_node, 8);
    EXPECT_EQ(b->gpus_per_node, 3);
    EXPECT_EQ(read_slurm_allocation(
                  env_of({{"SLURM_JOB_ID", "1"}, {"SLURM_GPUS_ON_NODE", "1"}, {"SLURM_JOB_GPUS", "0,1"}}), no_query)
                  ->gpus_per_node,
              1);
}

TEST(SlurmAllocation, MalformedVariableIsNamed)
{
    try {
        read_slurm_allocation(env_of({{"SLURM_JOB_ID", "1"}, {"SLURM_CPUS_ON_NODE", "lots"}}), no_query);
        FAIL() << "accepted SLURM_CPUS_ON_NODE=lots";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("SLURM_CPUS_ON_NODE"), std::string::npos);
    }
}

// What a real Slurm 22.05 sets (tests/slurm): a job that asks no memory, or whose allocation
// srun made, has no SLURM_MEM_PER_*; salloc's shell and the ranks mpirun starts in it have no
// SLURM_CPUS_ON_NODE and no GPU variable. What is missing comes from the job's TRES, asked once.
TEST(SlurmAllocation, WhatTheEnvironmentLacksComesFromTheJobsTres)
{
    int asked = 0;
    std::string asked_for;
    const JobTresQuery query = [&](const std::string &id) {
        ++asked;
        asked_for = id;
        return std::string("cpu=4,mem=24105M,node=1,billing=8,gres/gpu=2");
    };
    // A batch step without --mem: memory from Slurm, the rest from the environment.
    auto a = read_slurm_allocation(
        env_of({{"SLURM_JOB_ID", "17"}, {"SLURM_CPUS_ON_NODE", "2"}, {"SLURM_GPUS_ON_NODE", "1"}}), query);
    ASSERT_TRUE(a);
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(asked_for, "17");
    EXPECT_EQ(a->cpus_per_node, 2);
    EXPECT_EQ(a->gpus_per_node, 1);
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 24105 / 1024.0);
    // Under slurmd (SLURM_CPUS_ON_NODE set) no GPU variable means no GPU: not asked.
    asked = 0;
    a = read_slurm_allocation(
        env_of({{"SLURM_JOB_ID", "17"}, {"SLURM_CPUS_ON_NODE", "2"}, {"SLURM_MEM_PER_NODE", "1024"}}), query);
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(a->gpus_per_node, 0);
    // mpirun inside salloc: SLURM_JOB_CPUS_PER_NODE and the memory are there, no GPU
    // variable, the MPI rank instead of SLURM_PROCID.
    a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "18"},
                                      {"SLURM_JOB_CPUS_PER_NODE", "4(x3),2"},
                                      {"SLURM_MEM_PER_NODE", "2048"},
                                      {"OMPI_COMM_WORLD_RANK", "0"}}),
                              query);
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(a->cpus_per_node, 4);
    EXPECT_EQ(a->gpus_per_node, 2);
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 2);
    EXPECT_EQ(a->procid, 0);
    // Rank 2 charges nothing (task 0 does): it does not ask.
    asked = 0;
    a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "18"}, {"SLURM_JOB_CPUS_PER_NODE", "4"}, {"PMIX_RANK", "2"}}),
                              query);
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(a->procid, 2);
    // Slurm cannot be asked (no scontrol): what the environment gave, as before.
    a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "19"}, {"SLURM_CPUS_ON_NODE", "2"}}),
                              [](const std::string &) { return std::string(); });
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 0);
}

// A step of srun --exact -c 1 --mem=1024 in a job of 2 CPUs and 2048 MB: slurmd sets the
// step's CPUs, the inherited SLURM_MEM_PER_NODE is the job's; the step's memory is asked.
TEST(SlurmAllocation, AJobStepHoldsTheStepsMemory)
{
    std::vector<std::string> asked;
    const JobTresQuery query = [&](const std::string &id) {
        asked.push_back(id);
        return std::string(id == "21.0" ? "cpu=1,gres/gpu=1,mem=1G,node=1" : "cpu=2,mem=2G,node=1,billing=2");
    };
    auto a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "21"},
                                           {"SLURM_STEP_ID", "0"},
                                           {"SLURM_CPUS_ON_NODE", "1"},
                                           {"SLURM_GPUS_ON_NODE", "1"},
                                           {"SLURM_MEM_PER_NODE", "2048"}}),
                                   query);
    EXPECT_EQ(asked, std::vector<std::string>{"21.0"});
    EXPECT_EQ(a->cpus_per_node, 1);
    EXPECT_EQ(a->gpus_per_node, 1);
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 1);
    // Slurm cannot be asked: the environment's memory, as before.
    a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "21"},
                                      {"SLURM_STEP_ID", "0"},
                                      {"SLURM_CPUS_ON_NODE", "1"},
                                      {"SLURM_MEM_PER_NODE", "2048"}}),
                              [](const std::string &) { return std::string(); });
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 2);
    EXPECT_EQ(scontrol_job_tres("21.0.1"), "");
    EXPECT_EQ(scontrol_job_tres(".0"), "");
    EXPECT_EQ(scontrol_job_tres("21."), "");
}

TEST(SlurmAllocation, JobTresIsParsedPerUnitAndNode)
{
    JobTres t = parse_job_tres("cpu=8,mem=2G,node=2,billing=8,gres/gpu=4");
    EXPECT_EQ(t.cpus, 8);
    EXPECT_EQ(t.nodes, 2);
    EXPECT_EQ(t.gpus, 4);
    EXPECT_TRUE(t.has_mem);
    EXPECT_DOUBLE_EQ(t.mem_gib, 2);
    EXPECT_DOUBLE_EQ(parse_job_tres("mem=1.50T").mem_gib, 1536);
    EXPECT_DOUBLE_EQ(parse_job_tres("mem=512M").mem_gib, 0.5);
    EXPECT_FALSE(parse_job_tres("cpu=1,node=1").has_mem);
    EXPECT_THROW(parse_job_tres("mem=lots"), std::invalid_argument);
    EXPECT_THROW(parse_job_tres("cpu=-1"), std::invalid_argument);
    // Per node: a two-node job's totals are halved.
    auto a = read_slurm_allocation(env_of({{"SLURM_JOB_ID", "20"}, {"SLURM_JOB_NUM_NODES", "2"}}),
                                   [](const std::string &) { return std::string("cpu=8,mem=2G,node=2,gres/gpu=4"); });
    EXPECT_EQ(a->cpus_per_node, 4);
    EXPECT_EQ(a->gpus_per_node, 2);
    EXPECT_DOUBLE_EQ(a->mem_gib_per_node, 1);
    // scontrol is never run for a job id that is not a number.
    EXPECT_EQ(scontrol_job_tres("1; touch /tmp/x"), "");
}
