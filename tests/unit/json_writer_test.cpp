// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/core/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

using hetpu::JsonWriter;

TEST(JsonWriter, NestedObjectsAndArrays)
{
    JsonWriter j;
    j.begin_object().field("app", "matmul").field("n", 1024).field("ok", true);
    j.begin_array("workers");
    j.begin_object().field("id", 0).field("busy_s", 0.5).end_object();
    j.begin_object().field("id", 1).end_object();
    j.end_array().field("after", -3).end_object();
    EXPECT_EQ(j.str(), R"({"app":"matmul","n":1024,"ok":true,"workers":[{"id":0,"busy_s":0.5},{"id":1}],"after":-3})");
}

TEST(JsonWriter, EscapesStringsAndRejectsNonFiniteNumbers)
{
    JsonWriter j;
    j.begin_object().field("s", "a\"b\\c\nd\x01").field("nan", std::nan("")).end_object();
    EXPECT_EQ(j.str(), "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"nan\":null}");
}

TEST(JsonWriter, ExplicitNull)
{
    JsonWriter j;
    j.begin_object().key("verified").null().field("n", 1).end_object();
    EXPECT_EQ(j.str(), R"({"verified":null,"n":1})");
}
