// SPDX-License-Identifier: LGPL-2.1-or-later
// Option parsing shared by the `hetpu su` subcommands, on CLI11: "--name value" or
// "--name=value" pairs and "--flag"s, each subcommand naming the ones it accepts, so a typo is
// an error rather than ignored. Values stay text until the subcommand asks for them as what
// they must be (number, count), so every error names the option.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetpu::su {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// --help was given: what() is the subcommand's help text.
class HelpRequested : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An option's name (without "--"), what its value looks like ("FILE"; empty for a flag) and
// what it does, for --help.
struct OptionSpec {
    std::string name;
    std::string value;
    std::string help;
};

class Options {
public:
    // Throws UsageError naming an unknown option, a missing value or a repeated option, and
    // HelpRequested for --help. command: "rate", ...; description: what it does.
    Options(const std::string &command, int argc, char **argv, const std::vector<OptionSpec> &options,
            const std::string &description);

    bool has(const std::string &name) const { return values_.count(name) || flags_.count(name); }
    std::string get(const std::string &name, const std::string &fallback = "") const;
    std::string required(const std::string &name) const;
    // A number >= min; throws UsageError naming the option otherwise.
    double number(const std::string &name, double min) const;
    int count(const std::string &name, int min) const;

private:
    std::map<std::string, std::string> values_;
    std::set<std::string> flags_;
};

}  // namespace hetpu::su
