// SPDX-License-Identifier: LGPL-2.1-or-later
// Every HETPU_* environment variable is declared once, in settings.cpp: name, type, accepted
// range or choices, default, one line of documentation. Code reads a setting only through
// Settings, which parses and checks it the same way everywhere, and the README's table is
// printed from the declarations (`hetpu settings --markdown`; a test compares the two).
// Variables of other programs that hetpu reads (StarPU's, Slurm's, the MPI launchers',
// HOME...) go through process_env(): this module is the one place that reads the environment.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetpu {

// How a variable is looked up: the process environment in the library, a map in tests.
using EnvLookup = std::function<const char *(const char *)>;

// The process environment (getenv): the lookup every Settings uses unless told otherwise.
const char *process_env(const char *name);

enum class SettingType {
    Flag,    // 1/0, on/off, yes/no, true/false
    Whole,   // a whole number within [min, max]
    Number,  // a finite real number within [min, max]
    Choice,  // one of `choices` ("a|b|c")
    Text,    // free text, checked by whoever reads it (e.g. a trade-off expression)
    Path,    // a file or directory name
};

struct SettingSpec {
    const char *name;
    SettingType type;
    const char *default_text;  // the default as users read it ("8", "automatic", "off")
    const char *doc;           // one line: what it does
    double min = 0;            // Whole and Number: the accepted range
    double max = 0;
    const char *choices = nullptr;  // Choice: "a|b|c"
    const char *example = nullptr;  // a valid value, quoted in error messages
    // Number: a rule beyond the range (e.g. "0 or >= 1"); null: none. `rule` says it in words.
    bool (*accepts)(double) = nullptr;
    const char *rule = nullptr;
};

// Every declared setting, in the order the README shows them (grouped by module).
const std::vector<SettingSpec> &setting_specs();

// The declaration of `name`, or null when hetpu has no such setting.
const SettingSpec *find_setting(const std::string &name);

// An invalid value: the message names the variable, what it holds, what it accepts and an
// example, so that a user can fix it without reading the documentation.
class SettingError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Typed, checked reads of declared settings. Each getter returns nullopt when the variable
// is unset or empty, throws SettingError when its value is invalid, and throws
// std::logic_error when the code asks for an undeclared name or the wrong type (a bug).
class Settings {
public:
    explicit Settings(EnvLookup lookup = process_env) : lookup_(std::move(lookup)) {}

    std::optional<bool> flag(const char *name) const;
    std::optional<uint64_t> whole(const char *name) const;
    std::optional<double> number(const char *name) const;
    std::optional<std::string> choice(const char *name) const;
    std::optional<std::string> text(const char *name) const;  // Text and Path settings

    bool flag_or(const char *name, bool fallback) const { return flag(name).value_or(fallback); }

    // Checks every declared setting that is set; the message of the first invalid one, or
    // "" when all are valid. Start-up calls it so that a bad value fails before any work.
    std::string first_error() const;

private:
    const char *raw(const SettingSpec &spec) const;
    EnvLookup lookup_;
};

// Where hetpu keeps its files (profiles, fronts, PLB-HAC models, the ledger): $HETPU_HOME if set, else
// $XDG_DATA_HOME/hetpu, else $HOME/.local/share/hetpu; "" when none of those is set.
std::string hetpu_home(const EnvLookup &lookup = process_env);

// The README's table of settings (Markdown, one row per setting, header included).
std::string settings_markdown_table();

// `hetpu settings`: every setting with its current value in `lookup`'s environment.
std::string settings_listing(const EnvLookup &lookup = process_env);

}  // namespace hetpu
