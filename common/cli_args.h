// SPDX-License-Identifier: LGPL-2.1-or-later
// Parsing a `hetpu <command>` subcommand's arguments with CLI11, the same way everywhere.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/finite_number.h"

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

// A command with subcommands (`hetpu`, `hetpu su`): each subcommand parses its own
// arguments, so this level only picks one and hands it every argument after its name,
// --help included.
struct Subcommand {
    const char *name;
    const char *summary;
    std::function<int(int, char **)> run;
};

// Runs the subcommand argv[0] names with argv[1..argc). `--help`, `-h` and `help` print the
// list (exit 0); no argument prints it to stderr (exit 2); an unknown name is named (exit 2).
inline int run_subcommand(const std::string &program, const std::string &description,
                          const std::vector<Subcommand> &commands, int argc, char **argv)
{
    CLI::App app{description, program};
    app.require_subcommand(1);
    const Subcommand *chosen = nullptr;
    for (const Subcommand &c : commands) {
        CLI::App *sub = app.add_subcommand(c.name, c.summary);
        sub->prefix_command();
        sub->set_help_flag();
        sub->callback([&chosen, &c] { chosen = &c; });
    }
    bool help = false;
    app.add_subcommand("help", "this text")->allow_extras()->callback([&help] { help = true; });
    // Rendered before parsing: afterwards CLI11 renders the chosen subcommand's help instead.
    const std::string usage = app.help();
    if (argc < 1) {
        std::fputs(usage.c_str(), stderr);
        return 2;
    }
    try {
        parse_or_throw(app, argc, argv);
    } catch (const CLI::CallForHelp &) {
        help = true;
    } catch (const CLI::ParseError &e) {
        // CLI11 would say "a subcommand is required"; name what was typed instead.
        if (!chosen && argv[0][0] != '-') {
            std::fprintf(stderr, "%s: unknown command '%s' (%s --help lists them)\n", program.c_str(), argv[0],
                         program.c_str());
            return 2;
        }
        std::fprintf(stderr, "%s: %s\nRun '%s --help' for the commands.\n", program.c_str(), e.what(), program.c_str());
        return 2;
    }
    if (help || !chosen) {
        std::fputs(usage.c_str(), stdout);
        return 0;
    }
    std::vector<std::string> rest = app.get_subcommands().front()->remaining();
    std::vector<char *> args;
    for (std::string &a : rest)
        args.push_back(a.data());
    args.push_back(nullptr);
    // Commands throw what they cannot handle themselves: one line naming the command, not
    // std::terminate's abort.
    try {
        return chosen->run(static_cast<int>(rest.size()), args.data());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s %s: %s\n", program.c_str(), chosen->name, e.what());
        return 1;
    }
}

}  // namespace hetpu::cli
