// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: PLB-HAC's HETPU_PLBHAC_* settings.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

#include "common/settings.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacOptions, ParsesValidValues)
{
    std::map<std::string, std::string> env{{"HETPU_PLBHAC_GAP_MS", "250"}, {"HETPU_PLBHAC_TAIL", "0.6"},
                                           {"HETPU_PLBHAC_ALPHA", "0.2"},  {"HETPU_PLBHAC_STEPS", "12"},
                                           {"HETPU_PLBHAC_XINIT", "2048"}, {"HETPU_PLBHAC_HEDGE", "0"}};
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    PlbhacOptions o;
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_DOUBLE_EQ(o.gap_threshold_s, 0.25);
    EXPECT_DOUBLE_EQ(o.tail_fraction, 0.6);
    EXPECT_DOUBLE_EQ(o.alpha, 0.2);
    EXPECT_EQ(o.steps, 12u);
    EXPECT_EQ(o.x_init, 2048u);
    EXPECT_FALSE(o.hedge_straggle);
    // Flags take the spellings of every hetpu flag (common/settings.h).
    env = {{"HETPU_PLBHAC_HEDGE", "on"}, {"HETPU_PLBHAC_ALIGN", "off"}};
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_TRUE(o.hedge_straggle);
    EXPECT_FALSE(o.align_finish);

    // Unset or empty: defaults kept (the paper's 400 ms, 70%, 0.1).
    PlbhacOptions d;
    EXPECT_NO_THROW(plbhac_options_from_env(d, [](const char *) -> const char * { return nullptr; }));
    EXPECT_DOUBLE_EQ(d.gap_threshold_s, 0.4);
    EXPECT_DOUBLE_EQ(d.tail_fraction, 0.7);
    EXPECT_DOUBLE_EQ(d.alpha, 0.1);
    EXPECT_EQ(d.steps, 8u);
    EXPECT_TRUE(d.hedge_straggle);
    EXPECT_NO_THROW(plbhac_options_from_env(d, [](const char *) -> const char * { return ""; }));
    EXPECT_DOUBLE_EQ(d.gap_threshold_s, 0.4);
    // Boundaries accepted.
    env = {{"HETPU_PLBHAC_GAP_MS", "0"},
           {"HETPU_PLBHAC_TAIL", "1"},
           {"HETPU_PLBHAC_ALPHA", "0"},
           {"HETPU_PLBHAC_STEPS", "1"}};
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_DOUBLE_EQ(o.gap_threshold_s, 0.0);
    EXPECT_EQ(o.steps, 1u);
}

TEST(PlbhacOptions, RejectsEachBadValueNamingTheVariable)
{
    const std::vector<std::pair<std::string, std::vector<std::string>>> bad{
        {"HETPU_PLBHAC_GAP_MS", {"abc", "-1", "12ms", "nan", "inf"}},
        {"HETPU_PLBHAC_TAIL", {"x", "-0.1", "1.5", "70%"}},
        {"HETPU_PLBHAC_ALPHA", {"-0.1", "1", "0.1.2"}},
        {"HETPU_PLBHAC_STEPS", {"0", "2.5", "-3", "eight"}},
        {"HETPU_PLBHAC_XINIT", {"1.5", "-1", "1k"}},
        {"HETPU_PLBHAC_STEP_ERROR", {"-0.1", "x"}},
        {"HETPU_PLBHAC_MIN_STEPS", {"0", "2.5"}},
        {"HETPU_PLBHAC_HEDGE", {"2", "maybe", "0.5"}},
        {"HETPU_PLBHAC_SOLVER", {"newton", "Ipopt"}},
    };
    for (const auto &[var, values] : bad) {
        for (const auto &v : values) {
            PlbhacOptions o;
            o.x_init = 777;
            auto lookup = [&, var = var, v = v](const char *n) -> const char * {
                if (var == n)
                    return v.c_str();
                if (std::string(n) == "HETPU_PLBHAC_TAIL")
                    return "0.5";  // a valid value read before some bad ones
                return nullptr;
            };
            EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError, var + "='" + v + "' is invalid")
                << "=" << v;
            // On an error the options are left as they were.
            EXPECT_DOUBLE_EQ(o.tail_fraction, 0.7) << var << "=" << v;
            EXPECT_EQ(o.x_init, 777u);
        }
    }
}

TEST(PlbhacOptions, TrustIsAnOption)
{
    PlbhacOptions o;
    std::map<std::string, std::string> env{{"HETPU_PLBHAC_TRUST", "8"}};
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.trust, 8.0);
    env["HETPU_PLBHAC_TRUST"] = "0.5";
    EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError,
                     "HETPU_PLBHAC_TRUST='0.5' is invalid: expected 0 (no cap) or a factor >= 1");
    EXPECT_EQ(o.trust, 8.0) << "unchanged on error";
}

TEST(PlbhacOptions, SolverIsAnOption)
{
    PlbhacOptions o;
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Auto);
    std::map<std::string, std::string> env{{"HETPU_PLBHAC_SOLVER", "ipopt"}};
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Ipopt);
    env["HETPU_PLBHAC_SOLVER"] = "newton";
    EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError,
                     "HETPU_PLBHAC_SOLVER='newton' is invalid: expected one of auto, ipopt");
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Ipopt) << "unchanged on error";
    env["HETPU_PLBHAC_SOLVER"] = "auto";
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Auto);
}

TEST(PlbhacOptions, DefaultsAreTheOnesTheSettingsTableShows)
{
    // The README's table is printed from common/settings.cpp; the planner's defaults live in
    // PlbhacOptions. Reading each shown default back must change nothing.
    const PlbhacOptions defaults;
    std::map<std::string, std::string> env;
    for (const char *name :
         {"HETPU_PLBHAC_STEPS", "HETPU_PLBHAC_WARM_STEPS", "HETPU_PLBHAC_MIN_STEP_MS", "HETPU_PLBHAC_STEP_ERROR",
          "HETPU_PLBHAC_MIN_STEPS", "HETPU_PLBHAC_GAP_MS", "HETPU_PLBHAC_TAIL", "HETPU_PLBHAC_ALPHA",
          "HETPU_PLBHAC_ALIGN", "HETPU_PLBHAC_HEDGE", "HETPU_PLBHAC_SOLVER", "HETPU_PLBHAC_TRUST"}) {
        const hetpu::SettingSpec *spec = hetpu::find_setting(name);
        ASSERT_NE(spec, nullptr) << name;
        std::string shown = spec->default_text;
        ASSERT_TRUE(shown.size() > 2 && shown.front() == '`' && shown.back() == '`') << name << ": " << shown;
        env[name] = shown.substr(1, shown.size() - 2);
    }
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    PlbhacOptions read;
    ASSERT_NO_THROW(plbhac_options_from_env(read, lookup));
    EXPECT_EQ(read.steps, defaults.steps);
    EXPECT_EQ(read.warm_steps, defaults.warm_steps);
    EXPECT_DOUBLE_EQ(read.min_step_s, defaults.min_step_s);
    EXPECT_DOUBLE_EQ(read.step_error, defaults.step_error);
    EXPECT_EQ(read.min_steps, defaults.min_steps);
    EXPECT_DOUBLE_EQ(read.gap_threshold_s, defaults.gap_threshold_s);
    EXPECT_DOUBLE_EQ(read.tail_fraction, defaults.tail_fraction);
    EXPECT_DOUBLE_EQ(read.alpha, defaults.alpha);
    EXPECT_EQ(read.align_finish, defaults.align_finish);
    EXPECT_EQ(read.hedge_straggle, defaults.hedge_straggle);
    EXPECT_EQ(read.solver, defaults.solver);
    EXPECT_DOUBLE_EQ(read.trust, defaults.trust);
}
