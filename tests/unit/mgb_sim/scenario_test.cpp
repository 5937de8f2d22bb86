// SPDX-License-Identifier: LGPL-2.1-or-later
// Scenario parsing for `hetpu mgb-sim`: presets, expansion of counts and repeats, and
// errors that name the offending field and how to fix it.
#include <gtest/gtest.h>

#include <string>

#include "tools/mgb_sim/scenario.h"

namespace {

using hetpu::mgb_sim::MgbScenario;
using hetpu::mgb_sim::parse_mgb_scenario;
using hetpu::mgb_sim::ScenarioError;

const char *kJob = R"({"name": "a", "memory_gib": 2, "cpu_seconds": 1,
                       "kernels": [{"blocks": 10, "threads_per_block": 64, "seconds": 1.5, "repeat": 3}]})";

std::string error_of(const std::string &text)
{
    try {
        parse_mgb_scenario(text);
    } catch (const ScenarioError &e) {
        return e.what();
    }
    return "(no error)";
}

TEST(MgbScenario, PresetsCountsAndRepeats)
{
    const MgbScenario s = parse_mgb_scenario(
        std::string(R"({"gpus": [{"preset": "v100", "count": 4},
        {"preset": "P100", "memory_gib": 12}], "workers": 16, "noise": 0.1,
        "jobs": [)") +
        kJob +
        R"(, {"memory_gib": 1, "repeat": 2, "kernels": [{"blocks": 1, "threads_per_block": 1, "seconds": 1}]}]})");
    ASSERT_EQ(s.gpus.size(), 5u);
    EXPECT_STREQ(s.gpus[0].name, "V100");
    EXPECT_EQ(s.gpus[0].sms, 80u);
    EXPECT_EQ(s.gpus[0].memory_bytes, 16ull << 30);
    EXPECT_EQ(s.gpus[4].memory_bytes, 12ull << 30);  // explicit field over the preset's
    EXPECT_EQ(s.gpus[4].sms, 56u);
    EXPECT_EQ(s.workers, 16u);
    EXPECT_DOUBLE_EQ(s.noise, 0.1);
    ASSERT_EQ(s.jobs.size(), 3u);
    EXPECT_EQ(s.jobs[0].name, "a");
    EXPECT_EQ(s.jobs[0].memory_bytes, 2ull << 30);
    EXPECT_EQ(s.jobs[0].kernels[0].repeat, 3u);
    EXPECT_EQ(s.jobs[1].name, "job1");
    EXPECT_EQ(s.jobs[2].name, "job1");
}

TEST(MgbScenario, ExplicitGpu)
{
    const MgbScenario s = parse_mgb_scenario(std::string(R"({"gpus": [{"name": "toy", "memory_gib": 1, "sms": 2,
        "max_warps_per_sm": 8, "max_blocks_per_sm": 4}], "workers": 1, "jobs": [)") +
                                             kJob + "]}");
    EXPECT_STREQ(s.gpus[0].name, "toy");
    EXPECT_EQ(s.gpus[0].max_warps(), 16u);
}

TEST(MgbScenario, ErrorsNameTheFieldAndTheFix)
{
    const std::string gpus = R"("gpus": [{"preset": "V100"}], "workers": 2)";
    EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
    EXPECT_NE(error_of(R"({"workers": 2, "jobs": []})").find("gpus: missing"), std::string::npos);
    EXPECT_NE(error_of(R"({"gpus": [{"preset": "K80"}], "workers": 1, "jobs": []})")
                  .find("gpus[0].preset: unknown GPU 'K80'; one of P100, V100"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"gpus": [{"name": "x", "memory_gib": 1}], "workers": 1, "jobs": []})")
                  .find("gpus[0].sms: missing"),
              std::string::npos);
    EXPECT_NE(error_of("{" + gpus + R"(, "jobs": []})").find("jobs: must be a non-empty array"), std::string::npos);
    EXPECT_NE(error_of(R"({"gpus": [{"preset": "V100"}], "workers": 0, "jobs": [)" + std::string(kJob) + "]}")
                  .find("workers: must be at least 1"),
              std::string::npos);
    const std::string bad_seconds =
        "{" + gpus +
        R"(, "jobs": [{"memory_gib": 1, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": -1}]}]})";
    EXPECT_NE(error_of(bad_seconds)
                  .find("jobs[0].kernels[0].seconds: must be positive (got -1); the kernel's standalone run time"),
              std::string::npos)
        << error_of(bad_seconds);
    const std::string misspelt = "{" + gpus + R"(, "jobs": [{"memory_gb": 1, "kernels": []}]})";
    EXPECT_NE(error_of(misspelt).find("jobs[0].memory_gb: unknown field; the known fields are"), std::string::npos)
        << error_of(misspelt);
    const std::string no_blocks =
        "{" + gpus + R"(, "jobs": [{"memory_gib": 1, "kernels": [{"threads_per_block": 32, "seconds": 1}]}]})";
    EXPECT_NE(error_of(no_blocks).find("jobs[0].kernels[0].blocks: missing"), std::string::npos);
    const std::string text_memory =
        "{" + gpus +
        R"(, "jobs": [{"memory_gib": "4", "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1}]}]})";
    EXPECT_NE(error_of(text_memory).find(R"(jobs[0].memory_gib: must be a number (got "4"))"), std::string::npos);
    EXPECT_NE(
        error_of(R"({"gpus": [{"preset": "V100", "count": 17}], "workers": 1, "jobs": [)" + std::string(kJob) + "]}")
            .find("gpus[0].count"),
        std::string::npos);
    EXPECT_THROW(hetpu::mgb_sim::load_mgb_scenario("/nonexistent/scenario.json"), ScenarioError);
}

// Numbers past what the simulation can hold exactly are refused with the
// field named (1e10 GiB used to wrap the byte counters; 1e300 s printed makespans of 1e305),
// and so is a batch of more kernel launches than a run can simulate in reasonable time.
TEST(MgbScenario, OutOfRangeNumbersAndTooManyLaunchesAreRefused)
{
    const std::string gpus = R"("gpus": [{"preset": "V100"}], "workers": 2)";
    auto with_job = [&](const std::string &job) { return error_of("{" + gpus + R"(, "jobs": [)" + job + "]}"); };
    EXPECT_NE(with_job(R"({"memory_gib": 1e10, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1}]})")
                  .find("jobs[0].memory_gib: must be at most 1048576 (got 10000000000.0)"),
              std::string::npos)
        << with_job(R"({"memory_gib": 1e10, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1}]})");
    EXPECT_NE(with_job(R"({"memory_gib": 1, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1e300}]})")
                  .find("jobs[0].kernels[0].seconds: must be at most"),
              std::string::npos);
    EXPECT_NE(with_job(R"({"memory_gib": 1, "cpu_seconds": 1e300, "kernels": [{"blocks": 1, "threads_per_block": 32,)"
                       R"( "seconds": 1}]})")
                  .find("jobs[0].cpu_seconds: must be at most"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"gpus": [{"preset": "V100", "memory_gib": 1e10}], "workers": 1, "jobs": [)" +
                       std::string(kJob) + "]}")
                  .find("gpus[0].memory_gib: must be at most"),
              std::string::npos);
    const std::string many = with_job(
        R"({"memory_gib": 1, "repeat": 100000, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1,)"
        R"( "repeat": 1000000}]})");
    EXPECT_NE(many.find("jobs[0]: takes the batch past 10000000 kernel launches"), std::string::npos) << many;
    EXPECT_NE(error_of("{" + gpus + R"(, "colocation": "shared", "jobs": [)" + std::string(kJob) + "]}")
                  .find("colocation: unknown model"),
              std::string::npos);
}

}  // namespace
