// SPDX-License-Identifier: LGPL-2.1-or-later
// Error paths are checked by their message, not only by their type: users read the message,
// so a test that only sees "something threw" would let a wrong or empty one through.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <optional>
#include <string>

namespace hetpu::test {

// The what() of the E that f() throws; a test failure (and "") when it throws nothing or
// something else.
template <typename E = std::exception, typename F> std::string thrown_message(F &&f)
{
    try {
        f();
    } catch (const E &e) {
        return e.what();
    } catch (const std::exception &e) {
        ADD_FAILURE() << "threw an unexpected exception type: " << e.what();
        return "";
    }
    ADD_FAILURE() << "threw nothing";
    return "";
}

// A copy of the E that f() throws, for errors that carry more than a message (a code);
// empty, and a test failure, when it throws nothing or something else.
template <typename E, typename F> std::optional<E> thrown(F &&f)
{
    try {
        f();
    } catch (const E &e) {
        return e;
    } catch (const std::exception &e) {
        ADD_FAILURE() << "threw an unexpected exception type: " << e.what();
        return std::nullopt;
    }
    ADD_FAILURE() << "threw nothing";
    return std::nullopt;
}

}  // namespace hetpu::test

// Expects `statement` to throw an E whose message contains `part`.
#define EXPECT_THROW_MSG(statement, E, part)                                                                           \
    EXPECT_NE(::hetpu::test::thrown_message<E>([&] { statement; }).find(part), std::string::npos)                      \
        << "expected " #E " containing \"" << (part) << "\" from " #statement
