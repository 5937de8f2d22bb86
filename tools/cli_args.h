// Parsing a `hetpu <command>` subcommand's arguments with CLI11, the same way everywhere.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/finite_number.h"

namespace hetpu::cli {

// Parses argv[0..argc) into app; throws CLI11's ParseError (CallForHelp after --help), for
// callers that report errors their own way (unit tests of a command line).
inline void parse_or_throw(CLI::App &app, int argc, const char *const *argv)
{
    // CLI11 takes the arguments as a reversed vector when there is no program name.
    std::vector<std::string> args;
    for (int i = argc - 1; i >= 0; --i)
        args.emplace_back(argv[i]);
    app.parse(args);
}

// Digits only, no sign, no overflow: what a count of elements or a seed must look like
// (strtoull alone takes "-4" as a huge number).
inline bool parse_whole_number(const std::string &text, std::uint64_t &out)
{
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno || *end)
        return false;
    out = v;
    return true;
}

// A finite real number, the whole text.
inline bool parse_real(const std::string &text, double &out)
{
    const std::optional<double> v = finite_number(text);
    if (!v)
        return false;
    out = *v;
    return true;
}

// Parses argv[0..argc) (the arguments after the subcommand's name). Returns nothing when
// the command should go on, else its exit status: 0 after --help, 2 after a usage error
// (CLI11 has printed the error and a hint).
inline std::optional<int> parse_args(CLI::App &app, int argc, const char *const *argv)
{
    try {
        parse_or_throw(app, argc, argv);
    } catch (const CLI::ParseError &e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    return std::nullopt;
}

}  // namespace hetpu::cli
