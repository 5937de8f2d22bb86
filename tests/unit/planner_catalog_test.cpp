// SPDX-License-Identifier: LGPL-2.1-or-later
// The load-balancing policies as the catalog lists them: each family built from an injected
// context (settings, messages, trace, model home, profiles) and run on a simulated machine,
// as `hetpu sim` and the StarPU runners build them.
#include "sched_policies/planner_catalog.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sched_policies/node_planner.h"
#include "tools/sim/optimum.h"
#include "tools/sim/scenario_profiles.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/simulator.h"

using namespace hetpu;
using namespace hetpu::sim;

namespace {

struct Fixture {
    std::map<std::string, std::string> env;
    std::vector<std::string> said;
    std::vector<std::string> traced;

    PlannerContext context(const std::string &policy)
    {
        PlannerContext c;
        c.policy = policy;
        c.env = [this](const char *name) -> const char * {
            auto it = env.find(name);
            return it == env.end() ? nullptr : it->second.c_str();
        };
        c.say = [this](const std::string &line) { said.push_back(line); };
        return c;
    }
    bool said_something_with(const std::string &part) const
    {
        for (const auto &s : said)
            if (s.find(part) != std::string::npos)
                return true;
        return false;
    }
};

// A fast GPU-like unit that costs little energy per element, a slow CPU that costs more.
Scenario two_units()
{
    Scenario s;
    s.workload = 64000;
    s.granule = 64;
    s.x_init = 1024;
    UnitSpec gpu;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.profile = {{1000, 0.001}, {64000, 0.064}};
    gpu.power_w = 100;
    UnitSpec cpu;
    cpu.name = "A.cpu0";
    cpu.unit_class = "cpu";
    cpu.profile = {{1000, 0.004}, {64000, 0.256}};
    cpu.power_w = 200;
    s.units = {gpu, cpu};
    return s;
}

std::unique_ptr<BlockPlanner> build(const std::string &name, const PlannerContext &c, const Scenario &s,
                                    const std::string &job = "")
{
    const PlannerPolicy *p = find_planner_policy(name);
    EXPECT_NE(p, nullptr) << name;
    BlockRules rules = block_rules(s);
    rules.job_name = job;
    return p && p->make ? p->make(c, planner_workers(s), rules) : nullptr;
}

}  // namespace

TEST(PlannerCatalog, ListsEveryLoadBalancingPolicyOnceInHelpOrder)
{
    std::vector<std::string> names;
    for (const PlannerPolicy &p : planner_policies()) {
        names.push_back(p.name);
        EXPECT_FALSE(p.description.empty()) << p.name;
        EXPECT_EQ(find_planner_policy(p.name), &p);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"greedy", "plb-hac", "hdss", "hepopta", "htpopta"}));
    const PlannerPolicy *greedy = find_planner_policy("greedy");
    EXPECT_EQ(greedy->make, nullptr);  // fixed blocks, no planner
    EXPECT_TRUE(greedy->unplaced_blocks_first_idle);
    EXPECT_FALSE(find_planner_policy("plb-hac")->unplaced_blocks_first_idle);  // StarPU's tree places them
    EXPECT_EQ(find_planner_policy("optimum"), nullptr);                        // a simulator baseline, no policy
    EXPECT_EQ(planner_policy_names(kUsesProfiles, " and "), "hepopta and htpopta");
    EXPECT_EQ(planner_policy_names(kUsesTrace | kUsesModels, ","), "plb-hac");
}

TEST(PlannerCatalog, ABadSettingIsSaidAndBuildsNoPlanner)
{
    const Scenario s = two_units();
    const std::map<std::string, std::pair<std::string, std::string>> bad = {
        {"plb-hac", {"HETPU_PLBHAC_ALPHA", "lots"}},
        {"hdss", {"HETPU_HDSS_XINIT", "-3"}},
        {"hepopta", {"HETPU_TRADEOFF", "cheap"}},
        {"htpopta", {"HETPU_BASE_POWER", "watts"}},
    };
    for (const auto &[policy, setting] : bad) {
        Fixture f;
        f.env[setting.first] = setting.second;
        EXPECT_EQ(build(policy, f.context(policy), s), nullptr) << policy;
        EXPECT_TRUE(f.said_something_with(setting.first)) << policy << " said: " << ::testing::PrintToString(f.said);
    }
}

TEST(PlannerCatalog, TheFirstBlockIsTheContextsUnlessASettingNamesOne)
{
    const Scenario s = two_units();
    Fixture f;
    PlannerContext c = f.context("hdss");
    c.x_init = 2048;
    EXPECT_EQ(build("hdss", c, s)->next_block(0, s.workload), 2048u);
    f.env["HETPU_HDSS_XINIT"] = "512";
    EXPECT_EQ(build("hdss", c, s)->next_block(0, s.workload), 512u);
    // plb-hac's training phase (a first run learns by a ladder of probes otherwise).
    f.env["HETPU_PLBHAC_LADDER"] = "0";
    PlannerContext p = f.context("plb-hac");
    p.x_init = 2048;
    EXPECT_EQ(build("plb-hac", p, s)->next_block(0, s.workload), 2048u);
}

TEST(PlannerCatalog, PlbhacTracesEveryBlockThroughTheContext)
{
    const Scenario s = two_units();
    Fixture f;
    PlannerContext c = f.context("plb-hac");
    c.x_init = s.x_init;
    c.trace = [&f](const std::string &line) { f.traced.push_back(line); };
    auto planner = build("plb-hac", c, s);
    const SimResult r = simulate(s, *planner, {1, false, false});
    ASSERT_EQ(f.traced.size(), r.blocks);
    uint64_t elements = 0;
    for (const std::string &line : f.traced) {
        const auto j = nlohmann::json::parse(line);
        EXPECT_TRUE(j.contains("phase")) << line;
        elements += j["size"].get<uint64_t>();
    }
    EXPECT_EQ(elements, s.workload);
    const auto *learning = dynamic_cast<const LearningPlanner *>(planner.get());
    ASSERT_NE(learning, nullptr);
    EXPECT_FALSE(learning->warm_started());
    EXPECT_GT(learning->training_s(), 0);
}

TEST(PlannerCatalog, PlbhacKeepsWhatItLearntUnderTheContextsHomeAndStartsFromIt)
{
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/hetpu-catalog-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string home = tmpl;
    const Scenario s = two_units();
    const std::string job = "catalog-test-" + std::to_string(getpid());
    Fixture f;
    PlannerContext c = f.context("plb-hac");
    c.x_init = s.x_init;
    c.models_home = home;
    c.host = "sim";
    {
        auto first = build("plb-hac", c, s, job);
        simulate(s, *first, {1, false, false});
        EXPECT_FALSE(dynamic_cast<const LearningPlanner &>(*first).warm_started());
    }
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(home + "/plbhac-models"))
        files.push_back(e.path());
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].filename().string().rfind(job + ".", 0), 0u) << files[0];
    auto second = build("plb-hac", c, s, job);
    EXPECT_TRUE(dynamic_cast<const LearningPlanner &>(*second).warm_started());
    EXPECT_EQ(dynamic_cast<const LearningPlanner &>(*second).training_s(), 0);
    second.reset();
    fs::remove_all(home);
}

TEST(PlannerCatalog, ParetoPoliciesPlanFromInjectedProfiles)
{
    const Scenario s = two_units();
    Fixture f;
    PlannerContext c = f.context("hepopta");
    c.profiles = scenario_profiles(s);
    // Fastest point: both units share the work; least dynamic energy: the GPU (0.1 J per
    // 1000 elements against the CPU's 0.8 J) takes it all.
    f.env["HETPU_TRADEOFF"] = "time";
    const SimResult fast = simulate(s, *build("hepopta", c, s), {1, false, false});
    f.env["HETPU_TRADEOFF"] = "energy";
    const SimResult frugal = simulate(s, *build("hepopta", c, s), {1, false, false});
    ASSERT_EQ(fast.units.size(), 2u);
    EXPECT_GT(fast.units[0].elements, 0u);
    EXPECT_GT(fast.units[1].elements, 0u);
    EXPECT_EQ(fast.blocks, 2u);  // one block per unit
    EXPECT_EQ(frugal.units[0].elements, s.workload);
    EXPECT_EQ(frugal.units[1].elements, 0u);
    EXPECT_LT(fast.makespan_s, frugal.makespan_s);
    // The exact front over the profile's sizes: the time point is the optimum at that step.
    const StaticDistribution best =
        optimum_distribution(std::vector<SimulatedUnit>(s.units.begin(), s.units.end()), s.workload, s.granule);
    EXPECT_GE(fast.makespan_s, best.makespan_s * (1 - 1e-12));
    EXPECT_LE(fast.makespan_s, best.makespan_s * 1.05);
    EXPECT_TRUE(f.said_something_with("source the scenario's unit curves")) << ::testing::PrintToString(f.said);
}

TEST(PlannerCatalog, HtpoptaNeedsAStaticPowerFromTheProfilesOrTheSetting)
{
    Scenario s = two_units();
    Fixture f;
    PlannerContext c = f.context("htpopta");
    auto profiles = std::make_shared<CalibratedProfiles>(*scenario_profiles(s));
    profiles->base_power_w = -1;
    c.profiles = profiles;
    EXPECT_EQ(build("htpopta", c, s), nullptr);
    EXPECT_TRUE(f.said_something_with("static power")) << ::testing::PrintToString(f.said);
    f.env["HETPU_BASE_POWER"] = "50";
    EXPECT_NE(build("htpopta", c, s), nullptr);
}

TEST(PlannerCatalog, ParetoWithoutProfilesFallsBackToFixedBlocksAndSaysSo)
{
    const Scenario s = two_units();
    Fixture f;
    f.env["HETPU_HOME"] = "/nonexistent/hetpu-home";
    auto planner = build("hepopta", f.context("hepopta"), s, "nosuchjob");
    ASSERT_NE(planner, nullptr);
    EXPECT_FALSE(planner->assigns_workers());
    EXPECT_TRUE(f.said_something_with("falling back")) << ::testing::PrintToString(f.said);
}

TEST(ScenarioProfiles, SizesDivideTheWorkloadInGranulesAndPriceTheNominalCost)
{
    Scenario s = two_units();
    s.workload = 1764160;  // 27565 granules of 64 = 5 x 37 x 149
    s.base_power_w = 30;
    const uint64_t step = scenario_profile_step(s);
    EXPECT_EQ(step, s.workload / 185);
    const auto p = scenario_profiles(s);
    ASSERT_EQ(p->sizes.size(), 185u);
    EXPECT_EQ(p->sizes.back(), s.workload);
    const SimulatedUnit cpu(s.units[1]);
    EXPECT_DOUBLE_EQ(p->time_s(1, step), cpu.nominal_cost(step).total());
    EXPECT_DOUBLE_EQ(p->energy_j(1, step), 200 * cpu.nominal_cost(step).total());
    EXPECT_EQ(p->base_power_w, 30);
    s.workload = 64 * 1009;  // a prime number of granules: one size, the whole job
    EXPECT_EQ(scenario_profile_step(s), s.workload);
}

TEST(NodePlanner, AppendsTheTraceToHetpuTraceAndRefusesAPathItCannotOpen)
{
    const Scenario s = two_units();
    const PlannerPolicy &plbhac = *find_planner_policy("plb-hac");
    BlockRules rules = block_rules(s);
    setenv("HETPU_TRACE", "/nonexistent-hetpu-dir/trace.jsonl", 1);
    EXPECT_EQ(make_node_planner(plbhac, planner_workers(s), rules), nullptr);
    char tmpl[] = "/tmp/hetpu-node-trace.XXXXXX";
    const int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    setenv("HETPU_TRACE", tmpl, 1);
    for (int run = 0; run < 2; ++run) {  // appended, not overwritten
        auto planner = make_node_planner(plbhac, planner_workers(s), rules);
        ASSERT_NE(planner, nullptr);
        simulate(s, *planner, {1, false, false});
    }
    unsetenv("HETPU_TRACE");
    std::ifstream in(tmpl);
    std::string line;
    unsigned lines = 0, elements = 0;
    while (std::getline(in, line)) {
        ++lines;
        elements += nlohmann::json::parse(line)["size"].get<unsigned>();
    }
    EXPECT_GT(lines, 2u);
    EXPECT_EQ(elements, 2 * s.workload);
    std::remove(tmpl);
    // hdss records no trace: HETPU_TRACE is not even opened.
    setenv("HETPU_TRACE", "/nonexistent-hetpu-dir/trace.jsonl", 1);
    EXPECT_NE(make_node_planner(*find_planner_policy("hdss"), planner_workers(s), rules), nullptr);
    unsetenv("HETPU_TRACE");
}
