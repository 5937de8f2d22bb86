// SPDX-License-Identifier: LGPL-2.1-or-later
// HETPU_MGB_COLOCATION: parsing, and what `auto` chooses on CUDA (an MPS control daemon in
// a pipe directory, or the compute mode) and on OpenCL.
#include "sched_policies/mgb/core/colocation.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace hetpu::mgb {
namespace {

TEST(Colocation, SettingParses)
{
    ColocationSetting s = ColocationSetting::Mps;
    std::string error;
    EXPECT_TRUE(parse_colocation_setting(nullptr, s, error));
    EXPECT_EQ(s, ColocationSetting::Auto);
    EXPECT_TRUE(parse_colocation_setting("", s, error));
    EXPECT_EQ(s, ColocationSetting::Auto);
    EXPECT_TRUE(parse_colocation_setting("mps", s, error));
    EXPECT_EQ(s, ColocationSetting::Mps);
    EXPECT_TRUE(parse_colocation_setting("time-sliced", s, error));
    EXPECT_EQ(s, ColocationSetting::TimeSliced);
    EXPECT_TRUE(parse_colocation_setting("auto", s, error));
    EXPECT_EQ(s, ColocationSetting::Auto);
}

TEST(Colocation, BadValueNamesTheSettingAndTheChoices)
{
    ColocationSetting s;
    std::string error;
    EXPECT_FALSE(parse_colocation_setting("MPS-ish", s, error));
    EXPECT_NE(error.find("HETPU_MGB_COLOCATION"), std::string::npos) << error;
    EXPECT_NE(error.find("MPS-ish"), std::string::npos) << error;
    for (const char *choice : {"auto", "mps", "time-sliced"})
        EXPECT_NE(error.find(choice), std::string::npos) << error;
}

// A fresh directory, removed with what it holds at the end of the test.
class PipeDirectory : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-mps-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override
    {
        unlink((dir_ + "/control").c_str());
        rmdir(dir_.c_str());
    }
    std::string dir_;
};

TEST_F(PipeDirectory, AutoOnCudaFindsTheControlDaemon)
{
    MpsProbe probe;
    probe.pipe_directory = dir_.c_str();
    // An empty pipe directory: the daemon is gone.
    ColocationChoice c = choose_colocation(ColocationSetting::Auto, true, probe);
    EXPECT_EQ(c.model, Colocation::TimeSliced);
    EXPECT_NE(c.reason.find(dir_), std::string::npos) << c.reason;
    // A daemon's control pipe appears.
    ASSERT_EQ(mkfifo((dir_ + "/control").c_str(), 0600), 0);
    c = choose_colocation(ColocationSetting::Auto, true, probe);
    EXPECT_EQ(c.model, Colocation::Mps);
    EXPECT_NE(c.reason.find(dir_), std::string::npos) << c.reason;
    // The explicit setting wins over what is detected.
    EXPECT_EQ(choose_colocation(ColocationSetting::TimeSliced, true, probe).model, Colocation::TimeSliced);
}

TEST_F(PipeDirectory, AStaleFileIsNoDaemon)
{
    const std::string path = dir_ + "/control";
    FILE *f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
    MpsProbe probe;
    probe.pipe_directory = dir_.c_str();
    EXPECT_EQ(choose_colocation(ColocationSetting::Auto, true, probe).model, Colocation::TimeSliced);
}

TEST_F(PipeDirectory, OpenClIsTimeSlicedEvenBesideADaemon)
{
    ASSERT_EQ(mkfifo((dir_ + "/control").c_str(), 0600), 0);
    MpsProbe probe;
    probe.pipe_directory = dir_.c_str();
    probe.exclusive_process = true;
    const ColocationChoice c = choose_colocation(ColocationSetting::Auto, false, probe);
    EXPECT_EQ(c.model, Colocation::TimeSliced);
    EXPECT_NE(c.reason.find("OpenCL"), std::string::npos) << c.reason;
    // Asked for explicitly, MPS is taken as given.
    EXPECT_EQ(choose_colocation(ColocationSetting::Mps, false, probe).model, Colocation::Mps);
}

TEST_F(PipeDirectory, ExclusiveProcessComputeModeMeansMps)
{
    MpsProbe probe;
    probe.pipe_directory = dir_.c_str();  // empty
    probe.exclusive_process = true;
    EXPECT_EQ(choose_colocation(ColocationSetting::Auto, true, probe).model, Colocation::Mps);
}

}  // namespace
}  // namespace hetpu::mgb
