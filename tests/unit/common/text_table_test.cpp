// SPDX-License-Identifier: LGPL-2.1-or-later
// Delimited numeric tables: delimiter and header detection, and the line-numbered errors
// for ragged rows, non-numbers and empty files.
#include "common/text_table.h"

#include <gtest/gtest.h>

using hetpu::parse_table;
using hetpu::Table;
using hetpu::TableFormat;

TEST(TextTable, CsvWithHeaderAndComments)
{
    Table t;
    std::string error;
    ASSERT_TRUE(parse_table("# points\nx,y\n1,2\n\n3.5, -4e1\n", "p.csv", TableFormat{}, t, error)) << error;
    EXPECT_EQ(t.rows, 2u);
    EXPECT_EQ(t.cols, 2u);
    EXPECT_EQ(t.header, (std::vector<std::string>{"x", "y"}));
    EXPECT_DOUBLE_EQ(t.at(1, 0), 3.5);
    EXPECT_DOUBLE_EQ(t.at(1, 1), -40.0);
}

TEST(TextTable, BlankSeparatedWithoutHeader)
{
    Table t;
    std::string error;
    ASSERT_TRUE(parse_table("1  2 3\n4\t5 6\n", "p.txt", TableFormat{}, t, error)) << error;
    EXPECT_TRUE(t.header.empty());
    EXPECT_EQ(t.rows, 2u);
    EXPECT_DOUBLE_EQ(t.at(1, 2), 6.0);
}

TEST(TextTable, RowNamesWithOrWithoutNameColumnInHeader)
{
    TableFormat f;
    f.row_names = true;
    Table a, b;
    std::string error;
    ASSERT_TRUE(parse_table("gene\ts1\ts2\ng1\t1\t2\ng2\t3\t4\n", "e.tsv", f, a, error)) << error;
    ASSERT_TRUE(parse_table("s1\ts2\ng1\t1\t2\ng2\t3\t4\n", "e.tsv", f, b, error)) << error;
    for (const Table *t : {&a, &b}) {
        EXPECT_EQ(t->header, (std::vector<std::string>{"s1", "s2"}));
        EXPECT_EQ(t->row_names, (std::vector<std::string>{"g1", "g2"}));
        EXPECT_DOUBLE_EQ(t->at(1, 1), 4.0);
    }
}

TEST(TextTable, RaggedRowNamesTheLine)
{
    Table t;
    std::string error;
    EXPECT_FALSE(parse_table("x,y\n1,2\n3,4\n5\n", "p.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("p.csv:4:"), std::string::npos) << error;
    EXPECT_NE(error.find("same number of columns"), std::string::npos) << error;
}

TEST(TextTable, NonNumericValueNamesLineAndColumn)
{
    Table t;
    std::string error;
    EXPECT_FALSE(parse_table("1,2\n3,abc\n", "p.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("p.csv:2: column 2: 'abc'"), std::string::npos) << error;
    EXPECT_FALSE(parse_table("1,2\n3,nan\n", "p.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("p.csv:2:"), std::string::npos) << error;
}

TEST(TextTable, EmptyFilesAndHeaderOnly)
{
    Table t;
    std::string error;
    EXPECT_FALSE(parse_table("", "e.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("e.csv: no data rows (the file is empty)"), std::string::npos) << error;
    EXPECT_FALSE(parse_table("# only a comment\n\n", "e.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("empty"), std::string::npos) << error;
    EXPECT_FALSE(parse_table("x,y\n", "e.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("after the header"), std::string::npos) << error;
}

TEST(TextTable, HeaderWidthMustMatch)
{
    Table t;
    std::string error;
    EXPECT_FALSE(parse_table("a,b,c\n1,2\n", "h.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("h.csv:1: the header has 3 column names"), std::string::npos) << error;
}

// A first row is a header only when a value field is not written as a number: a tiny
// (subnormal) or very long numeral is data, never silently dropped as a header.
TEST(TextTable, FirstRowWithASubnormalOrALongNumeralIsData)
{
    Table t;
    std::string error;
    ASSERT_TRUE(parse_table("1e-320,2\n3,4\n", "s.csv", TableFormat{}, t, error)) << error;
    EXPECT_TRUE(t.header.empty());
    ASSERT_EQ(t.rows, 2u);
    EXPECT_GT(t.at(0, 0), 0.0);
    EXPECT_LT(t.at(0, 0), 1e-300);
    const std::string long_numeral = "1." + std::string(70, '5');
    ASSERT_TRUE(parse_table(long_numeral + ",2\n3,4\n", "l.csv", TableFormat{}, t, error)) << error;
    EXPECT_TRUE(t.header.empty());
    ASSERT_EQ(t.rows, 2u);
    EXPECT_DOUBLE_EQ(t.at(0, 0), 1.5555555555555555);
    // A first-row value that overflows is an error naming it, not a header.
    EXPECT_FALSE(parse_table("1e999,2\n3,4\n", "o.csv", TableFormat{}, t, error));
    EXPECT_NE(error.find("o.csv:1: column 1: '1e999' is not a finite number"), std::string::npos) << error;
}

TEST(TextTable, ADirectoryIsNamedAsSuch)
{
    Table t;
    std::string error;
    EXPECT_FALSE(hetpu::read_table("/", TableFormat{}, t, error));
    EXPECT_NE(error.find("is a directory, not a file"), std::string::npos) << error;
}
