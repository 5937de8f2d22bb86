// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "node_arbiter/core/gpu_spec.h"
#include "tests/unit/thrown_message.h"

namespace hetpu::mgb {
namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;

void expect_preset(const char *name, uint64_t memory, uint32_t sms, uint32_t shared_kib)
{
    SCOPED_TRACE(name);
    const auto spec = gpu_preset(name);
    ASSERT_TRUE(spec.has_value());
    EXPECT_STREQ(spec->name, name);
    EXPECT_EQ(spec->memory_bytes, memory);
    EXPECT_EQ(spec->sms, sms);
    EXPECT_EQ(spec->max_warps_per_sm, 64u);
    EXPECT_EQ(spec->max_blocks_per_sm, 32u);
    EXPECT_EQ(spec->shared_mem_per_sm, shared_kib * 1024u);
    EXPECT_EQ(spec->warp_size, 32u);
    EXPECT_EQ(spec->max_warps(), uint64_t(sms) * 64);
    EXPECT_NO_THROW(check_spec(*spec));
}

TEST(GpuSpec, PresetsFollowNvidiasPublishedFigures)
{
    expect_preset("P100", 16 * GiB, 56, 64);
    expect_preset("V100", 16 * GiB, 80, 96);
    expect_preset("A100", 40 * GiB, 108, 164);
    expect_preset("H100", 80 * GiB, 132, 228);
}

TEST(GpuSpec, PresetLookupIsCaseInsensitiveAndExact)
{
    ASSERT_TRUE(gpu_preset("v100").has_value());
    EXPECT_STREQ(gpu_preset("v100")->name, "V100");
    EXPECT_TRUE(gpu_preset("h100").has_value());
    EXPECT_FALSE(gpu_preset("V10").has_value());
    EXPECT_FALSE(gpu_preset("V1000").has_value());
    EXPECT_FALSE(gpu_preset("").has_value());
    EXPECT_FALSE(gpu_preset("K80").has_value());
}

TEST(GpuSpec, PresetNamesListsEveryPresetAndEachResolves)
{
    const auto names = gpu_preset_names();
    EXPECT_EQ(names, (std::vector<std::string>{"P100", "V100", "A100", "H100"}));
    for (const auto &n : names)
        EXPECT_TRUE(gpu_preset(n).has_value()) << n;
}

TEST(GpuSpec, SetSpecNameTruncatesAndTerminates)
{
    GpuSpec spec;
    set_spec_name(spec, "OpenCL pthread");
    EXPECT_STREQ(spec.name, "OpenCL pthread");
    const std::string long_name(100, 'x');
    set_spec_name(spec, long_name);
    EXPECT_EQ(std::string(spec.name), std::string(sizeof spec.name - 1, 'x'));
    set_spec_name(spec, "A");  // a shorter name leaves no tail of the longer one
    EXPECT_STREQ(spec.name, "A");
}

TEST(GpuSpec, CheckSpecNamesEachInvalidField)
{
    GpuSpec ok;
    ok.sms = 1;
    EXPECT_NO_THROW(check_spec(ok));  // defaults: 64 warps, 32 blocks, warp 32, shared 0 = unlimited

    GpuSpec s = ok;
    s.sms = 0;
    EXPECT_THROW_MSG(check_spec(s), std::invalid_argument, "a device needs at least one SM (compute unit)");
    s.sms = kMaxSms;
    EXPECT_NO_THROW(check_spec(s));
    s.sms = kMaxSms + 1;
    EXPECT_THROW_MSG(check_spec(s), std::invalid_argument, "more than " + std::to_string(kMaxSms) + " SMs");

    s = ok;
    s.max_warps_per_sm = 0;
    EXPECT_THROW_MSG(check_spec(s), std::invalid_argument, "max_warps_per_sm is 0");
    s = ok;
    s.max_blocks_per_sm = 0;
    EXPECT_THROW_MSG(check_spec(s), std::invalid_argument, "max_blocks_per_sm is 0");
    s = ok;
    s.max_blocks_per_sm = 256;  // a Grant counts blocks per SM in one byte
    EXPECT_THROW_MSG(check_spec(s), std::invalid_argument, "max_blocks_per_sm above 255 (256)");
    s = ok;
    s.warp_size = 0;
    EXPECT_THROW_MSG(check_spec(s), std::invalid_argument, "warp_size is 0");
}

}  // namespace
}  // namespace hetpu::mgb
