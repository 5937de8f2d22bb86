// SPDX-License-Identifier: LGPL-2.1-or-later
// The charge of a finished run: process usage vs Slurm allocation, carbon, the summary.
#include <gtest/gtest.h>

#include "accounting_hook/core/run_charge.h"

using namespace hetpu::accounting;

namespace {

RunInputs inputs()
{
    RunInputs in;
    in.user = "ada";
    in.host = "n1";
    in.app = "matmul";
    in.policy = "dmda";
    in.partition.name = "work";
    in.partition.cores_per_node = 16;
    in.partition.mem_gib_per_node = 64;  // 4 GiB per core
    in.partition.cpu_tdp_w = 100;
    in.partition.origin = "test";
    in.wall_s = 1800;
    in.cores_in_use = 2;
    in.peak_rss_gib = 9;  // 3 shares
    in.workers = {{"cpu", 1, 10, 1.0, 50, "rapl", 40}, {"opencl", 1, 5, 0.5, 25, "rapl", 20}};
    return in;
}

}  // namespace

TEST(RunCharge, ProcessUsageChargesTheLargestFraction)
{
    JobRecord j = charge_run(inputs());
    EXPECT_EQ(j.fraction_source, "process");
    EXPECT_DOUBLE_EQ(j.fc, 2.0 / 16);
    EXPECT_DOUBLE_EQ(j.fm, 3.0 / 16);
    EXPECT_DOUBLE_EQ(j.weight, 16);
    EXPECT_DOUBLE_EQ(j.su, 16 * 0.5 * 3.0 / 16);  // memory-bound: 3 core-equivalents for half an hour
    EXPECT_DOUBLE_EQ(j.energy_j, 75);
    EXPECT_EQ(j.energy_source, "rapl");
    EXPECT_FALSE(j.gco2e);
}

TEST(RunCharge, SlurmAllocationBeatsProcessUsage)
{
    RunInputs in = inputs();
    SlurmAllocation a;
    a.job_id = "77";
    a.nodes = 2;
    a.cpus_per_node = 8;
    a.mem_gib_per_node = 8;
    in.slurm = a;
    in.grid_gco2e_per_kwh = 360;
    JobRecord j = charge_run(in);
    EXPECT_EQ(j.fraction_source, "slurm");
    EXPECT_EQ(j.slurm_job_id, "77");
    EXPECT_DOUBLE_EQ(j.su, 16 * 0.5 * 2 * 0.5);  // 8 of 16 cores on 2 nodes for half an hour
    ASSERT_TRUE(j.gco2e);
    EXPECT_DOUBLE_EQ(*j.gco2e, 75 / 3.6e6 * 360);
}

TEST(RunCharge, OnlySlurmTaskZeroChargesTheAllocation)
{
    RunInputs in = inputs();
    SlurmAllocation a;
    a.job_id = "77";
    a.cpus_per_node = 8;
    a.procid = 3;
    in.slurm = a;
    JobRecord j = charge_run(in);
    EXPECT_DOUBLE_EQ(j.su, 0);
    EXPECT_DOUBLE_EQ(j.energy_j, 75);  // its energy is still recorded
    EXPECT_NE(j.fraction_source.find("charged by task 0"), std::string::npos);
    in.slurm->procid = 0;
    EXPECT_DOUBLE_EQ(charge_run(in).su, 16 * 0.5 * 0.5);
}

TEST(RunCharge, UsageBeyondTheNodeIsChargedAsTheWholeNode)
{
    RunInputs in = inputs();
    in.cores_in_use = 40;
    JobRecord j = charge_run(in);
    EXPECT_DOUBLE_EQ(j.fc, 1);
    EXPECT_DOUBLE_EQ(j.su, 16 * 0.5);
}

TEST(RunCharge, SummaryExplainsTheChargeAndNamesSources)
{
    RunInputs in = inputs();
    in.workers[1].energy_source = "model";
    JobRecord j = charge_run(in);
    EXPECT_EQ(j.energy_source, "model+rapl");
    std::string s = format_summary(j, in.partition, "NOT recorded: disk full");
    EXPECT_NE(s.find("partition 'work'"), std::string::npos) << s;
    EXPECT_NE(s.find("[rapl] (model: 40 J)"), std::string::npos) << s;
    EXPECT_NE(s.find("[model]"), std::string::npos) << s;
    EXPECT_NE(s.find("= 1.5 SU"), std::string::npos) << s;
    EXPECT_NE(s.find("NOT recorded: disk full"), std::string::npos) << s;
    EXPECT_LE(std::count(s.begin(), s.end(), '\n'), 12);  // one screen
    EXPECT_EQ(format_joules(1234), "1.23 kJ");
    EXPECT_EQ(format_joules(0.0021), "2.1 mJ");
}

// The GPU fraction of a run that shared its device through the MGB arbiter.
namespace {

RunInputs gpu_inputs()
{
    RunInputs in = inputs();
    in.policy = "mgb";
    in.partition.gpus_per_node = 2;
    in.partition.gpu_tdp_w = 300;
    in.cores_in_use = 1;
    in.gpus_in_use = 1;
    in.peak_rss_gib = 1;
    DeviceShareUsage d;
    d.device = "cuda:0000:3b:00.0";
    d.peers = 2;
    d.attached_h = 0.5;
    d.used_share_h = 0.1;
    d.share_h = 0.5 / 3;
    d.fraction = 1.0 / 3;
    d.device_energy_j = 900;
    d.energy_j = 300;
    d.energy_source = "nvml";
    in.devices = {d};
    return in;
}

}  // namespace

TEST(RunCharge, SharedDeviceChargedByUseOrByAllocation)
{
    RunInputs in = gpu_inputs();
    in.charge_gpu_use = true;
    const JobRecord use = charge_run(in);
    EXPECT_EQ(use.gpu_share, "use");
    EXPECT_DOUBLE_EQ(use.fg_allocated, 0.5);  // one of two GPUs
    EXPECT_DOUBLE_EQ(use.fg, 1.0 / 6);        // a third of one of two GPUs
    EXPECT_DOUBLE_EQ(use.gpus, 1.0 / 3);
    in.charge_gpu_use = false;
    const JobRecord alloc = charge_run(in);
    EXPECT_EQ(alloc.gpu_share, "allocation");
    EXPECT_DOUBLE_EQ(alloc.fg, 0.5);
    EXPECT_GT(alloc.su, use.su);  // packing lowers the bill
    const std::string s = format_summary(use, in.partition, "recorded");
    EXPECT_NE(s.find("allocated 0.5, used 0.1667"), std::string::npos) << s;
    EXPECT_NE(s.find("shared with up to 2 other(s)"), std::string::npos) << s;
    EXPECT_NE(s.find("energy 300 J of 900 J [nvml]"), std::string::npos) << s;
    EXPECT_NE(s.find("idle time split by reservation"), std::string::npos) << s;
    const std::string a = format_summary(alloc, in.partition, "recorded");
    EXPECT_NE(a.find("GPU fraction charged: allocation 0.5 (the whole devices held; the shares below are not charged)"),
              std::string::npos)
        << a;
}

TEST(RunCharge, TheReportLineSaysWhatFractionWasCharged)
{
    RunInputs in = gpu_inputs();
    in.charge_gpu_use = true;
    const std::string use = shared_devices_line(charge_run(in));
    EXPECT_EQ(use,
              "GPU charged by use: fg 0.1667 (allocated 0.5): cuda:0000:3b:00.0 x0.333 (0.1667 share-h, 300 J, shared "
              "with 2)");
    in.charge_gpu_use = false;
    // Charged fg 0.5 (one whole GPU of two): the device's x0.333 is its use, not the charge.
    const std::string alloc = shared_devices_line(charge_run(in));
    EXPECT_EQ(alloc,
              "GPU charged by allocation: fg 0.5 (the whole devices held); not charged: cuda:0000:3b:00.0 x0.333 "
              "(0.1667 share-h, 300 J, shared with 2)");
}

TEST(RunCharge, AloneOnItsDeviceTheUseIsTheAllocation)
{
    RunInputs in = gpu_inputs();
    in.devices[0].peers = 0;
    in.devices[0].fraction = 1;
    in.charge_gpu_use = true;
    const JobRecord use = charge_run(in);
    in.charge_gpu_use = false;
    const JobRecord alloc = charge_run(in);
    EXPECT_DOUBLE_EQ(use.fg, alloc.fg);
    EXPECT_DOUBLE_EQ(use.su, alloc.su);
}
