// SPDX-License-Identifier: LGPL-2.1-or-later
// The profile CSV reader: accepted forms, and one clear error (with its line) per defect.
#include <gtest/gtest.h>

#include "sched_policies/pareto/core/profile_csv.h"

using namespace hetpu;

namespace {

// The message of the ProfileCsvError that parsing `text` throws ("" if none).
std::string error_of(const std::string &text, const std::vector<std::string> &known = {})
{
    try {
        parse_profile_csv(text, "p.csv", known);
    } catch (const ProfileCsvError &e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(ProfileCsv, ParsesRowsInFirstAppearanceOrderWithExtraColumnsCommentsAndQuotes)
{
    const std::string text = "# calibrated by hand\n"
                             "# base_power_w=42.5\n"
                             "processor,size,time_s,energy_j,energy_source\n"
                             "\n"
                             "opencl0,64,0.5,2,model\n"
                             "cpu0, 64 ,1.5,1,\"model\"\n"
                             "\"opencl0\",128,0.9,3.5,rapl\n";
    ProfileSet s = parse_profile_csv(text, "p.csv");
    ASSERT_EQ(s.processors.size(), 2u);
    EXPECT_EQ(s.processors[0].name, "opencl0");
    EXPECT_EQ(s.processors[1].name, "cpu0");
    ASSERT_EQ(s.processors[0].points.size(), 2u);
    EXPECT_EQ(s.processors[0].points[1].size, 128u);
    EXPECT_DOUBLE_EQ(s.processors[0].points[1].energy_j, 3.5);
    EXPECT_EQ(s.processors[0].points[1].line, 7);
    EXPECT_EQ(s.processors[1].points[0].size, 64u);
    EXPECT_DOUBLE_EQ(s.base_power_w, 42.5);
    EXPECT_EQ(energy_sources(s), (std::vector<std::string>{"model", "rapl"}));
    EXPECT_EQ(s.find("cpu0"), 1);
    EXPECT_EQ(s.find("cuda0"), -1);
}

TEST(ProfileCsv, KnownListFixesOrderAndRejectsOthers)
{
    const std::string text = "processor,size,time_s,energy_j\nb,1,1,1\na,1,2,0\n";
    ProfileSet s = parse_profile_csv(text, "p.csv", {"a", "b"});
    EXPECT_EQ(s.names(), (std::vector<std::string>{"a", "b"}));
    const std::string unknown = error_of(text + "c,1,1,1\n", {"a", "b"});
    EXPECT_NE(unknown.find("p.csv:4: unknown processor 'c'"), std::string::npos) << unknown;
    const std::string missing = error_of(text, {"a", "b", "gpu"});
    EXPECT_NE(missing.find("'gpu' has no rows"), std::string::npos) << missing;
}

TEST(ProfileCsv, EachDefectIsReportedWithItsLine)
{
    const std::string h = "processor,size,time_s,energy_j\n";
    struct Case {
        std::string text, expected;
    } cases[] = {
        {"", "p.csv:0: no header line"},
        {"cpu,size,time,energy\n", "p.csv:1: the header must name the columns processor,size,time_s,energy_j"},
        {h + "cpu0,1,1\n", "p.csv:2: expected 4 fields like the header, got 3"},
        {h + "cpu0,1,1,1\ncpu0,2,1,1,9\n", "p.csv:3: expected 4 fields"},
        {h + ",1,1,1\n", "p.csv:2: empty processor name"},
        {h + "cpu0,12.5,1,1\n", "p.csv:2: size '12.5' is not a positive integer"},
        {h + "cpu0,0,1,1\n", "p.csv:2: size '0' is not a positive integer"},
        {h + "cpu0,-3,1,1\n", "p.csv:2: size '-3' is not a positive integer"},
        {h + "cpu0,1,0,1\n", "p.csv:2: time_s '0' is not a positive number"},
        {h + "cpu0,1,-1,1\n", "p.csv:2: time_s '-1' is not a positive number"},
        {h + "cpu0,1,abc,1\n", "p.csv:2: time_s 'abc' is not a positive number"},
        {h + "cpu0,1,inf,1\n", "p.csv:2: time_s 'inf'"},
        {h + "cpu0,1,1,-0.5\n", "p.csv:2: energy_j '-0.5' is not a number of joules >= 0"},
        {h + "cpu0,1,1,nan\n", "p.csv:2: energy_j 'nan'"},
        {h + "cpu0,1,1,1\n\ncpu0,1,2,2\n", "p.csv:4: processor 'cpu0' size 1 was already given at line 2"},
        {h + "\"cpu0,1,1,1\n", "p.csv:2: unterminated quoted field"},
        {h + "\"cpu0\"x,1,1,1\n", "p.csv:2: unexpected text after a quoted field"},
        {h, "no data rows after the header"},
        {"processor,size,time_s,energy_j,size\n", "p.csv:1: column 'size' appears twice"},
        {"# base_power_w=lots\n" + h + "a,1,1,1\n", "p.csv:1: base_power_w"},
    };
    for (const Case &c : cases) {
        const std::string got = error_of(c.text);
        EXPECT_NE(got.find(c.expected), std::string::npos) << "input:\n" << c.text << "got: '" << got << "'";
    }
}

TEST(ProfileCsv, UnreadableFileIsAnError) { EXPECT_THROW(read_profile_csv("/nonexistent/dir/p.csv"), ProfileCsvError); }

TEST(ProfileCsv, GranulesAreTheGcdOfSizesAndWorkload)
{
    ProfileSet s = parse_profile_csv("processor,size,time_s,energy_j\na,64,1,1\na,192,2,2\nb,128,1,3\n", "p.csv");
    GranularProfiles g = to_granules(s, 512);
    EXPECT_EQ(g.granule, 64u);
    EXPECT_EQ(g.workload, 8);
    EXPECT_EQ(g.profiles[0].points[1].size, 3);
    EXPECT_EQ(g.profiles[1].points[0].size, 2);
    EXPECT_EQ(to_granules(s, 96).granule, 32u);  // the workload takes part in the gcd
    EXPECT_THROW(to_granules(s, 0), InvalidProfileError);
    ProfileSet fine = parse_profile_csv("processor,size,time_s,energy_j\na,1,1,1\n", "p.csv");
    EXPECT_THROW(to_granules(fine, (1u << 20) + 1), InvalidProfileError);
}
