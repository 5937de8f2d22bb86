// SPDX-License-Identifier: LGPL-2.1-or-later
// The matmul result line: one JSON object with the documented fields, "verified" null
// when not checked, and GFLOP/s computed as 2*m*n*k / makespan.
#include "apps/matmul/matmul_report.h"

#include <gtest/gtest.h>

#include <string>

namespace {

hetpu::matmul::Options problem()
{
    hetpu::matmul::Options o;
    o.precision = hetpu::matmul::Precision::Single;
    o.m = 100;
    o.n = 200;
    o.k = 50;
    return o;
}

hetpu::apps::AppRecord sample()
{
    hetpu::apps::AppRecord r;
    r.policy = "greedy";
    r.block = 32;
    r.planner = "fixed";
    r.rep = 2;
    r.makespan_s = 0.5;
    r.workers.push_back({0, "CPU", "CPU 0", 3, 96, 0.25, 0.0});
    r.workers.push_back({1, "OpenCL", "OpenCL 0 (\"pocl\")", 4, 104, 0.3, 0.01});
    hetpu::matmul::add_problem(r, problem());
    return r;
}

}  // namespace

TEST(MatmulReport, Gflops)
{
    EXPECT_DOUBLE_EQ(hetpu::matmul::gflops(1000, 1000, 1000, 2.0), 1.0);
    EXPECT_EQ(hetpu::matmul::gflops(10, 10, 10, 0.0), 0.0);
}

TEST(MatmulReport, JsonLineHasEveryField)
{
    std::string line = hetpu::apps::json_line(sample());
    EXPECT_EQ(line.find('\n'), std::string::npos);
    for (const char *f :
         {"\"app\":\"matmul\"", "\"policy\":\"greedy\"", "\"precision\":\"single\"", "\"m\":100", "\"n\":200",
          "\"k\":50", "\"block\":32", "\"planner\":\"fixed\"", "\"rep\":2", "\"makespan_s\":0.5", "\"gflops\":0.004",
          "\"verified\":null", "\"workers\":[{\"id\":0", "\"type\":\"CPU\"", "\"type\":\"OpenCL\"",
          "\"name\":\"OpenCL 0 (\\\"pocl\\\")\"", "\"blocks\":4", "\"elements\":104", "\"busy_s\":0.3"})
        EXPECT_NE(line.find(f), std::string::npos) << "missing " << f << " in " << line;
    EXPECT_EQ(line.front(), '{');
    EXPECT_EQ(line.back(), '}');
}

TEST(MatmulReport, VerifiedIsBoolWhenChecked)
{
    auto r = sample();
    r.verified = hetpu::apps::Verified::Passed;
    EXPECT_NE(hetpu::apps::json_line(r).find("\"verified\":true"), std::string::npos);
    r.verified = hetpu::apps::Verified::Failed;
    EXPECT_NE(hetpu::apps::json_line(r).find("\"verified\":false"), std::string::npos);
}

TEST(MatmulReport, SummaryNamesPolicyRateAndWorkers)
{
    std::string s = hetpu::matmul::summary(sample(), problem(), 5);
    for (const char *f : {"rep 3/5", "greedy", "single", "100x200x50", "GFLOP/s", "not checked", "CPU 0", "OpenCL 0"})
        EXPECT_NE(s.find(f), std::string::npos) << "missing " << f << " in\n" << s;
}
