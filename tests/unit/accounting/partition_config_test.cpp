// SPDX-License-Identifier: LGPL-2.1-or-later
// The TOML partition file: its documented format, defaults, and errors that name file, line, key.
#include <gtest/gtest.h>

#include <string>

#include "accounting_hook/core/partition_config.h"

using namespace hetpu::accounting;

namespace {

std::string error_of(const std::string &text)
{
    try {
        parse_accounting_config(text, "site.toml");
    } catch (const ConfigError &e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(PartitionConfig, ReadsTheIssueExample)
{
    AccountingConfig c = parse_accounting_config(R"(
[accounting]
grid_gco2e_per_kwh = 450
partition = "gpu"

[partition.work]
cores_per_node = 128
mem_gib_per_node = 230

[partition.gpu]
cores_per_node = 64
mem_gib_per_node = 256
cpu_sockets = 1
cpu_tdp_w = 280
gpus_per_node = 4
gpu_tdp_w = 560
tres_billing_weights = "CPU=1,GRES/gpu=64"
)",
                                                 "site.toml");
    ASSERT_EQ(c.partitions.size(), 2u);
    EXPECT_EQ(c.partitions[0].name, "work");  // file order
    const Partition &g = c.choose("");
    EXPECT_EQ(g.name, "gpu");
    EXPECT_EQ(g.cores_per_node, 64);
    EXPECT_DOUBLE_EQ(g.mem_gib_per_node, 256);
    EXPECT_EQ(g.cpu_sockets, 1);
    EXPECT_DOUBLE_EQ(g.cpu_tdp_w, 280);
    EXPECT_EQ(g.gpus_per_node, 4);
    EXPECT_DOUBLE_EQ(g.gpu_tdp_w, 560);
    EXPECT_EQ(g.tres_billing_weights, "CPU=1,GRES/gpu=64");
    EXPECT_EQ(g.origin, "config site.toml");
    EXPECT_EQ(c.choose("work").gpus_per_node, 0);
    EXPECT_EQ(c.choose("work").cpu_sockets, 1);
    ASSERT_TRUE(c.grid_gco2e_per_kwh);
    EXPECT_DOUBLE_EQ(*c.grid_gco2e_per_kwh, 450);
    EXPECT_THROW(c.choose("debug"), ConfigError);
}

TEST(PartitionConfig, AmbiguousChoiceListsThePartitions)
{
    AccountingConfig c = parse_accounting_config("[partition.a]\ncores_per_node = 2\nmem_gib_per_node = "
                                                 "4\n[partition.b]\ncores_per_node = 2\nmem_gib_per_node = 4\n",
                                                 "s.toml");
    try {
        c.choose("");
        FAIL();
    } catch (const ConfigError &e) {
        EXPECT_NE(std::string(e.what()).find("a, b"), std::string::npos) << e.what();
    }
}

TEST(PartitionConfig, ErrorsNameFileLineAndKey)
{
    std::string e = error_of("[partition.gpu]\ncores_per_node = 64\nmem_gib_per_node = 256\ngpu_tdp = 560\n");
    EXPECT_NE(e.find("site.toml:4:"), std::string::npos) << e;
    EXPECT_NE(e.find("unknown key 'gpu_tdp'"), std::string::npos) << e;

    e = error_of("[partition.gpu]\ncores_per_node = \"64\"\nmem_gib_per_node = 256\n");
    EXPECT_NE(e.find("site.toml:2:"), std::string::npos) << e;
    EXPECT_NE(e.find("cores_per_node"), std::string::npos) << e;

    e = error_of("[partition.gpu]\ncores_per_node = 64\n");
    EXPECT_NE(e.find("needs mem_gib_per_node"), std::string::npos) << e;

    e = error_of("[partition.gpu]\ncores_per_node = 64\nmem_gib_per_node = 256\ngpus_per_node = 4\ncpu_tdp_w = 280\n");
    EXPECT_NE(e.find("gpu_tdp_w"), std::string::npos) << e;

    e = error_of("[partition.gpu]\ncores_per_node = 64\nmem_gib_per_node = = 256\n");
    EXPECT_NE(e.find("site.toml:3:"), std::string::npos) << e;

    e = error_of("[partitions.gpu]\ncores_per_node = 64\n");
    EXPECT_NE(e.find("'partitions'"), std::string::npos) << e;

    e = error_of("[accounting]\npartition = \"gpu\"\n[partition.cpu]\ncores_per_node = 1\nmem_gib_per_node = 1\n");
    EXPECT_NE(e.find("names no [partition.gpu]"), std::string::npos) << e;

    EXPECT_NE(error_of("").find("no [partition.NAME]"), std::string::npos);
    EXPECT_THROW(load_accounting_config("/nonexistent/site.toml"), ConfigError);
}
