// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: PLB-HAC's HETPU_PLBHAC_* settings.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

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
        {"HETPU_PLBHAC_HEDGE", {"2", "on", "0.5"}},
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
            EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError, var + " must be ") << "=" << v;
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
                     "HETPU_PLBHAC_TRUST must be 0 (no cap) or a factor >= 1 over a PU's largest measured block");
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
                     "HETPU_PLBHAC_SOLVER must be auto (the equal-finish search where every curve increases");
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Ipopt) << "unchanged on error";
    env["HETPU_PLBHAC_SOLVER"] = "auto";
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Auto);
}
