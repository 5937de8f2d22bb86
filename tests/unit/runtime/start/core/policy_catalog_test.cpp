// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/start/core/policy_catalog.h"

#include <gtest/gtest.h>

using hetpu::PolicyCatalog;

namespace {
PolicyCatalog sample()
{
    PolicyCatalog c;
    c.add({"greedy", "first idle PU takes the next block", true});
    c.add({"plb-hac", "profile-based load balancing", true});
    c.add({"dmda", "data-aware performance model", false});
    c.add({"eager", "eager policy with a central queue", false});
    return c;
}
}  // namespace

TEST(PolicyCatalog, FindsByExactName)
{
    PolicyCatalog c = sample();
    ASSERT_NE(c.find("greedy"), nullptr);
    EXPECT_TRUE(c.find("greedy")->from_hetpu);
    ASSERT_NE(c.find("dmda"), nullptr);
    EXPECT_FALSE(c.find("dmda")->from_hetpu);
    EXPECT_EQ(c.find("Greedy"), nullptr);
    EXPECT_EQ(c.find("gree"), nullptr);
    EXPECT_EQ(c.find(""), nullptr);
}

TEST(PolicyCatalog, FirstRegistrationOfANameWins)
{
    PolicyCatalog c;
    c.add({"eager", "hetpu's eager", true});
    c.add({"eager", "StarPU's eager", false});
    ASSERT_EQ(c.entries().size(), 1u);
    EXPECT_TRUE(c.find("eager")->from_hetpu);
}

TEST(PolicyCatalog, HelpListsBothSectionsWithDescriptions)
{
    std::string help = sample().help_text();
    auto hetpu_at = help.find("hetpu policies:");
    auto starpu_at = help.find("StarPU built-in policies:");
    ASSERT_NE(hetpu_at, std::string::npos);
    ASSERT_NE(starpu_at, std::string::npos);
    EXPECT_LT(hetpu_at, starpu_at);
    // hetpu's policies are listed in the first section, StarPU's in the second.
    EXPECT_LT(help.find("plb-hac"), starpu_at);
    EXPECT_GT(help.find("dmda"), starpu_at);
    EXPECT_NE(help.find("profile-based load balancing"), std::string::npos);
    EXPECT_NE(help.find("data-aware performance model"), std::string::npos);
}

TEST(PolicyCatalog, UnknownNameMessageNamesTheInputSuggestsAndLists)
{
    std::string msg = sample().unknown_name_message("gredy", "STARPU_SCHED");
    EXPECT_NE(msg.find("'gredy'"), std::string::npos);
    EXPECT_NE(msg.find("STARPU_SCHED"), std::string::npos);
    EXPECT_NE(msg.find("did you mean 'greedy'"), std::string::npos);
    for (const char *name : {"greedy", "plb-hac", "dmda", "eager"})
        EXPECT_NE(msg.find(name), std::string::npos) << name;
}

TEST(PolicyCatalog, NoSuggestionForFarNames)
{
    EXPECT_EQ(sample().closest_name("nonexistent"), "");
    EXPECT_EQ(sample().unknown_name_message("nonexistent", "").find("did you mean"), std::string::npos);
}

TEST(EditDistance, ClassicCases)
{
    EXPECT_EQ(hetpu::edit_distance("", ""), 0u);
    EXPECT_EQ(hetpu::edit_distance("abc", ""), 3u);
    EXPECT_EQ(hetpu::edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(hetpu::edit_distance("dmda", "dmdas"), 1u);
}
