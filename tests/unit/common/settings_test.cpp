// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/settings.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

using hetpu::EnvLookup;
using hetpu::SettingError;
using hetpu::Settings;

namespace {

// An environment made of `vars` alone. The map lives as long as the test's lambda.
EnvLookup env(const std::map<std::string, std::string> &vars)
{
    return [vars](const char *name) -> const char * {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

std::string error_of(const Settings &s, const char *name)
{
    try {
        s.first_error();
        if (const hetpu::SettingSpec *spec = hetpu::find_setting(name)) {
            switch (spec->type) {
            case hetpu::SettingType::Flag: s.flag(name); break;
            case hetpu::SettingType::Whole: s.whole(name); break;
            case hetpu::SettingType::Number: s.number(name); break;
            case hetpu::SettingType::Choice: s.choice(name); break;
            default: s.text(name); break;
            }
        }
    } catch (const SettingError &e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Settings, UnsetOrEmptyIsNoValue)
{
    const Settings s(env({{"HETPU_PLBHAC_TAIL", ""}}));
    EXPECT_FALSE(s.number("HETPU_PLBHAC_TAIL").has_value());
    EXPECT_FALSE(s.whole("HETPU_BLOCK").has_value());
    EXPECT_TRUE(s.flag_or("HETPU_ACCOUNTING", true));
    EXPECT_EQ(s.first_error(), "");
}

TEST(Settings, FlagsAcceptTheUsualSpellingsAndNothingElse)
{
    for (const char *on : {"1", "on", "ON", "yes", "true"})
        EXPECT_EQ(Settings(env({{"HETPU_VERBOSE", on}})).flag("HETPU_VERBOSE"), true) << on;
    for (const char *off : {"0", "off", "No", "false"})
        EXPECT_EQ(Settings(env({{"HETPU_VERBOSE", off}})).flag("HETPU_VERBOSE"), false) << off;
    const Settings bad(env({{"HETPU_VERBOSE", "2"}}));
    EXPECT_THROW(bad.flag("HETPU_VERBOSE"), SettingError);
    EXPECT_NE(bad.first_error().find("HETPU_VERBOSE='2' is invalid"), std::string::npos) << bad.first_error();
}

TEST(Settings, NumbersAreRangeCheckedAndWholeNumbersWhole)
{
    EXPECT_DOUBLE_EQ(*Settings(env({{"HETPU_PLBHAC_TAIL", "0.6"}})).number("HETPU_PLBHAC_TAIL"), 0.6);
    EXPECT_THROW(Settings(env({{"HETPU_PLBHAC_TAIL", "1.5"}})).number("HETPU_PLBHAC_TAIL"), SettingError);
    EXPECT_THROW(Settings(env({{"HETPU_PLBHAC_TAIL", "0.6x"}})).number("HETPU_PLBHAC_TAIL"), SettingError);
    EXPECT_THROW(Settings(env({{"HETPU_PLBHAC_TAIL", "nan"}})).number("HETPU_PLBHAC_TAIL"), SettingError);
    EXPECT_EQ(*Settings(env({{"HETPU_BLOCK", "256"}})).whole("HETPU_BLOCK"), 256u);
    EXPECT_THROW(Settings(env({{"HETPU_BLOCK", "0"}})).whole("HETPU_BLOCK"), SettingError);  // at least 1
    EXPECT_THROW(Settings(env({{"HETPU_BLOCK", "2.5"}})).whole("HETPU_BLOCK"), SettingError);
    EXPECT_THROW(Settings(env({{"HETPU_BLOCK", "-4"}})).whole("HETPU_BLOCK"), SettingError);
    EXPECT_EQ(*Settings(env({{"HETPU_MGB_AGING", "0"}})).whole("HETPU_MGB_AGING"), 0u);  // 0: strict FIFO
}

TEST(Settings, ARuleBeyondTheRangeIsChecked)
{
    // HETPU_PLBHAC_TRUST: 0 (no cap) or a factor of at least 1.
    EXPECT_EQ(*Settings(env({{"HETPU_PLBHAC_TRUST", "0"}})).number("HETPU_PLBHAC_TRUST"), 0.0);
    EXPECT_EQ(*Settings(env({{"HETPU_PLBHAC_TRUST", "4"}})).number("HETPU_PLBHAC_TRUST"), 4.0);
    const std::string msg = error_of(Settings(env({{"HETPU_PLBHAC_TRUST", "0.5"}})), "HETPU_PLBHAC_TRUST");
    EXPECT_NE(msg.find("0 (no cap) or a factor >= 1"), std::string::npos) << msg;
}

TEST(Settings, ChoicesAreExact)
{
    EXPECT_EQ(*Settings(env({{"HETPU_PLBHAC_SOLVER", "ipopt"}})).choice("HETPU_PLBHAC_SOLVER"), "ipopt");
    for (const char *bad : {"Ipopt", "ipop", "auto|ipopt", "|"})
        EXPECT_THROW(Settings(env({{"HETPU_PLBHAC_SOLVER", bad}})).choice("HETPU_PLBHAC_SOLVER"), SettingError) << bad;
}

TEST(Settings, TheMessageNamesTheVariableTheValueAndAValidExample)
{
    const std::string msg = error_of(Settings(env({{"HETPU_ENERGY", "solar"}})), "HETPU_ENERGY");
    EXPECT_NE(msg.find("HETPU_ENERGY='solar'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("one of auto, rapl, nvml, model"), std::string::npos) << msg;
    EXPECT_NE(msg.find("e.g. HETPU_ENERGY="), std::string::npos) << msg;
}

TEST(Settings, AskingForAnUndeclaredNameOrTheWrongTypeIsABug)
{
    const Settings s(env({}));
    EXPECT_THROW(s.flag("HETPU_NO_SUCH_SETTING"), std::logic_error);
    EXPECT_THROW(s.flag("HETPU_PLBHAC_TAIL"), std::logic_error);
    EXPECT_THROW(s.number("HETPU_VERBOSE"), std::logic_error);
}

TEST(Settings, EveryDeclarationIsCompleteAndItsExampleValid)
{
    std::set<std::string> names;
    for (const hetpu::SettingSpec &spec : hetpu::setting_specs()) {
        EXPECT_TRUE(names.insert(spec.name).second) << spec.name << " declared twice";
        EXPECT_EQ(std::string(spec.name).rfind("HETPU_", 0), 0u) << spec.name;
        EXPECT_TRUE(spec.doc && *spec.doc) << spec.name;
        EXPECT_TRUE(spec.default_text && *spec.default_text) << spec.name;
        ASSERT_TRUE(spec.example && *spec.example) << spec.name;
        // Each example is accepted: an error message never suggests an invalid value.
        EXPECT_EQ(Settings(env({{spec.name, spec.example}})).first_error(), "") << spec.name << "=" << spec.example;
        if (spec.type == hetpu::SettingType::Choice) {
            EXPECT_TRUE(spec.choices && *spec.choices) << spec.name;
        }
        EXPECT_EQ(hetpu::find_setting(spec.name), &spec);
        EXPECT_NE(hetpu::settings_markdown_table().find(std::string("| `") + spec.name + "` |"), std::string::npos);
    }
    EXPECT_EQ(hetpu::find_setting("HETPU_NO_SUCH_SETTING"), nullptr);
}

TEST(Settings, FirstErrorChecksEverySetVariable)
{
    const Settings s(env({{"HETPU_PLBHAC_STEPS", "8"}, {"HETPU_CG_RATIO", "0"}}));
    const std::string msg = s.first_error();
    EXPECT_NE(msg.find("HETPU_CG_RATIO='0'"), std::string::npos) << msg;
}

TEST(Settings, HetpuHomeFallsBackToXdgThenHome)
{
    EXPECT_EQ(hetpu::hetpu_home(env({{"HETPU_HOME", "/h"}, {"XDG_DATA_HOME", "/x"}, {"HOME", "/u"}})), "/h");
    EXPECT_EQ(hetpu::hetpu_home(env({{"HETPU_HOME", ""}, {"XDG_DATA_HOME", "/x"}, {"HOME", "/u"}})), "/x/hetpu");
    EXPECT_EQ(hetpu::hetpu_home(env({{"HOME", "/u"}})), "/u/.local/share/hetpu");
    EXPECT_EQ(hetpu::hetpu_home(env({})), "");
}
