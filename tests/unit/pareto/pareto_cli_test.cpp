// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu pareto` without the process: argument errors, and the JSON it writes
// checked for consistency with the profiles it came from.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tools/pareto/pareto_command.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu;
using namespace hetpu::pareto_cli;

namespace {

std::string parse_error(std::vector<const char *> argv)
{
    return test::thrown_message<CLI::ParseError>([&] { parse_args(static_cast<int>(argv.size()), argv.data()); });
}

Args parse(std::vector<const char *> argv) { return parse_args(static_cast<int>(argv.size()), argv.data()); }

// Non-linear, non-monotone profiles of three processors; "b" appears first.
const char *kCsv = "processor,size,time_s,energy_j,energy_source\n"
                   "b,10,0.9,1.0,model\n"
                   "b,20,1.5,1.5,model\n"
                   "b,30,2.5,2.2,model\n"
                   "a,10,0.3,3.0,model\n"
                   "a,20,0.5,5.5,model\n"
                   "a,30,0.6,9.0,model\n"
                   "a,40,0.9,11.0,model\n"
                   "c,20,0.8,2.0,model\n"
                   "c,40,1.9,3.5,model\n";

}  // namespace

TEST(ParetoCli, RejectsBadCommandLines)
{
    EXPECT_NE(parse_error({"--workload", "10"}).find("--profiles is required"), std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv"}).find("--workload is required"), std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv", "--workload", "-4"}).find("positive integer"), std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv", "--workload", "0"}).find("positive integer"), std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv", "--workload", "8", "--objective", "both"}).find("neither dynamic"),
              std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv", "--workload", "8", "--base-power", "-1"}).find("watts >= 0"),
              std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv", "--workload", "8", "--format", "xml"}).find("neither table"),
              std::string::npos);
    EXPECT_NE(parse_error({"--profiles", "p.csv", "--workload", "8", "--frobnicate"}).find("not expected"),
              std::string::npos);
    EXPECT_NE(parse_error({"--profiles"}).find("--profiles"), std::string::npos);
    EXPECT_THROW(parse({"--help"}), CLI::CallForHelp);
    EXPECT_EQ(parse({"--profiles=p.csv", "--workload=8"}).workload, 8u);
    const Args all = parse({"--profiles", "p.csv", "--workload", "8", "--objective", "total", "--base-power", "90",
                            "--format", "json", "--plot", "x.png"});
    EXPECT_TRUE(all.base_power_given);
    EXPECT_EQ(all.plot, "x.png");
}

TEST(ParetoCli, JsonFrontIsSortedConsistentAndInCsvOrder)
{
    for (EnergyObjective obj : {EnergyObjective::Dynamic, EnergyObjective::Total}) {
        Args args;
        args.profiles = "p.csv";
        args.workload = 60;
        args.objective = obj;
        args.base_power_w = 3.0;
        const ProfileSet set = parse_profile_csv(kCsv, "p.csv");
        const Result r = compute(args, set);
        const nlohmann::json j = nlohmann::json::parse(render_json(r));
        EXPECT_EQ(j["objective"], obj == EnergyObjective::Dynamic ? "dynamic" : "total");
        EXPECT_EQ(j["workload"], 60);
        EXPECT_EQ(j["processors"], nlohmann::json::array({"b", "a", "c"}));
        EXPECT_EQ(j["energy_sources"], nlohmann::json::array({"model"}));
        const auto &front = j["front"];
        ASSERT_GE(front.size(), 2u);
        const double ps = obj == EnergyObjective::Dynamic ? 0.0 : 3.0;
        for (std::size_t i = 0; i < front.size(); ++i) {
            // Distribution in elements, re-evaluated from the CSV figures.
            const auto &d = front[i]["distribution"];
            ASSERT_EQ(d.size(), 3u);
            double t = 0, e = 0;
            long sum = 0;
            for (std::size_t k = 0; k < 3; ++k) {
                const long x = d[k];
                sum += x;
                if (x == 0)
                    continue;
                bool found = false;
                for (const CsvPoint &pt : set.processors[k].points)
                    if (static_cast<long>(pt.size) == x) {
                        t = std::max(t, pt.time_s);
                        e += pt.energy_j;
                        found = true;
                    }
                EXPECT_TRUE(found) << "size " << x << " of " << set.processors[k].name << " was never measured";
            }
            EXPECT_EQ(sum, 60);
            EXPECT_DOUBLE_EQ(front[i]["time_s"].get<double>(), t);
            EXPECT_NEAR(front[i]["energy_j"].get<double>(), e + ps * t, 1e-12);
            if (i > 0) {
                EXPECT_GT(front[i]["energy_j"].get<double>(), front[i - 1]["energy_j"].get<double>());
                EXPECT_LT(front[i]["time_s"].get<double>(), front[i - 1]["time_s"].get<double>());
            }
        }
        const auto &lb = j["load_balanced"];
        EXPECT_EQ(lb["distribution"].size(), 3u);
        // Nothing on the front is dominated by the load-balanced point.
        for (const auto &f : front)
            EXPECT_FALSE(lb["time_s"].get<double>() <= f["time_s"].get<double>() &&
                         lb["energy_j"].get<double>() < f["energy_j"].get<double>());
        const auto &m = j["metrics"];
        EXPECT_EQ(m["front_size"], front.size());
        EXPECT_DOUBLE_EQ(m["t_opt_s"].get<double>(), front.back()["time_s"].get<double>());
        EXPECT_DOUBLE_EQ(m["e_opt_j"].get<double>(), front.front()["energy_j"].get<double>());
        EXPECT_GE(m["lb_time_improvement_pct"].get<double>(), 0.0);
        EXPECT_GE(m["lb_energy_saving_pct"].get<double>(), 0.0);
        const std::string table = render_table(r);
        EXPECT_NE(table.find("LB"), std::string::npos);
        EXPECT_NE(table.find("5% more energy than the optimum buys"), std::string::npos);
    }
}

TEST(ParetoCli, UnreachableWorkloadNamesTheMeasuredSizes)
{
    Args args;
    args.profiles = "p.csv";
    args.workload = 5;
    try {
        compute(args, parse_profile_csv(kCsv, "p.csv"));
        FAIL() << "workload 5 accepted";
    } catch (const UnreachableWorkloadError &e) {
        EXPECT_NE(std::string(e.what()).find("workload 5 cannot be formed"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("b: 3 sizes in [10, 30]"), std::string::npos) << e.what();
    }
}

// A consumer compares solutions exactly (an oracle, a diff of two runs): every number in the
// JSON must parse back to the very double that was computed, even where two solutions differ
// only in the 12th significant digit.
TEST(ParetoCli, JsonNumbersRoundTripExactly)
{
    const char *csv = "processor,size,time_s,energy_j,energy_source\n"
                      "a,1,0.1000000000001,1.0000000000001,model\n"
                      "a,2,0.2000000000003,2.0000000000002,model\n"
                      "b,1,0.1000000000002,1.0000000000003,model\n"
                      "b,2,0.3141592653589793,0.7071067811865476,model\n";
    for (EnergyObjective obj : {EnergyObjective::Dynamic, EnergyObjective::Total}) {
        Args args;
        args.profiles = "p.csv";
        args.workload = 3;
        args.objective = obj;
        args.base_power_w = 1.0 / 3.0;
        const Result r = compute(args, parse_profile_csv(csv, "p.csv"));
        const nlohmann::json j = nlohmann::json::parse(render_json(r));
        ASSERT_EQ(j["front"].size(), r.front.size());
        for (std::size_t i = 0; i < r.front.size(); ++i) {
            const Distribution &d = r.front[i];
            EXPECT_EQ(j["front"][i]["time_s"].get<double>(), d.time_s) << i;
            const double energy = energy_of(d, obj);
            EXPECT_EQ(j["front"][i]["energy_j"].get<double>(), energy) << i;
        }
        if (obj == EnergyObjective::Total) {
            EXPECT_EQ(j["base_power_w"].get<double>(), 1.0 / 3.0);
        }
        EXPECT_EQ(j["metrics"]["t_opt_s"].get<double>(), r.metrics.t_opt_s);
        EXPECT_EQ(j["metrics"]["lb_energy_saving_pct"].get<double>(), r.metrics.lb_energy_saving_pct);
    }
}
