// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/su/su_options.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/finite_number.h"
#include "common/cli_args.h"

namespace hetpu::su {

Options::Options(const std::string &command, int argc, char **argv, const std::vector<OptionSpec> &options,
                 const std::string &description)
{
    CLI::App app{description, "hetpu su " + command};
    for (const OptionSpec &o : options) {
        const std::string name = o.name;
        if (o.value.empty())
            app.add_flag_callback(
                "--" + name, [this, name] { flags_.insert(name); }, o.help);
        else
            app.add_option_function<std::string>(
                   "--" + name, [this, name](const std::string &v) { values_[name] = v; }, o.help)
                ->type_name(o.value);
    }
    try {
        cli::parse_or_throw(app, argc, argv);
    } catch (const CLI::CallForHelp &) {
        throw HelpRequested(app.help());
    } catch (const CLI::ParseError &e) {
        throw UsageError(e.what());
    }
}

std::string Options::get(const std::string &name, const std::string &fallback) const
{
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

std::string Options::required(const std::string &name) const
{
    auto it = values_.find(name);
    if (it == values_.end() || it->second.empty())
        throw UsageError("--" + name + " is required");
    return it->second;
}

double Options::number(const std::string &name, double min) const
{
    const std::string text = required(name);
    const std::optional<double> parsed = finite_number(text);
    if (!parsed)
        throw UsageError("--" + name + " '" + text + "' is not a number");
    const double v = *parsed;
    if (v < min) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", min);
        throw UsageError("--" + name + " must be at least " + buf);
    }
    return v;
}

int Options::count(const std::string &name, int min) const
{
    double v = number(name, min);
    if (v != std::floor(v))
        throw UsageError("--" + name + " must be a whole number");
    return static_cast<int>(v);
}

}  // namespace hetpu::su
