// Parsing a `hetpu <command>` subcommand's arguments with CLI11, the same way everywhere.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hetpu::cli {

// Parses argv[0..argc) (the arguments after the subcommand's name). Returns nothing when
// the command should go on, else its exit status: 0 after --help, 2 after a usage error
// (CLI11 has printed the error and a hint).
inline std::optional<int> parse_args(CLI::App &app, int argc, char **argv)
{
    // CLI11 takes the arguments as a reversed vector when there is no program name.
    std::vector<std::string> args;
    for (int i = argc - 1; i >= 0; --i)
        args.emplace_back(argv[i]);
    try {
        app.parse(args);
    } catch (const CLI::ParseError &e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    return std::nullopt;
}

}  // namespace hetpu::cli
