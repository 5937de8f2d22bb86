// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/common/option_scanner.h"

#include <string_view>

namespace hetpu::apps {

bool scan_options(int argc, const char *const argv[], const OptionSpec *specs, std::size_t nspecs,
                  const char *positional_hint,
                  const std::function<bool(const std::string &name, const char *value)> &handle, std::string &error)
{
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i] ? argv[i] : "";
        std::string_view name = arg;
        const char *value = nullptr;
        if (size_t eq = arg.find('='); arg.substr(0, 2) == "--" && eq != std::string_view::npos) {
            name = arg.substr(0, eq);
            value = argv[i] + eq + 1;
        }
        const OptionSpec *spec = nullptr;
        for (std::size_t s = 0; s < nspecs; ++s)
            if (name == specs[s].name)
                spec = &specs[s];
        if (!spec) {
            error = !arg.empty() && arg[0] == '-'
                        ? "unknown option '" + std::string(name) + "': run with --help for the list of options"
                        : "unexpected argument '" + std::string(arg) + "': " + positional_hint;
            return false;
        }
        if (!spec->takes_value && value) {
            error = "option " + std::string(name) + " takes no value";
            return false;
        }
        if (spec->takes_value && !value) {
            if (i + 1 >= argc) {
                error = "option " + std::string(name) + " needs a value (run with --help)";
                return false;
            }
            value = argv[++i];
        }
        if (!handle(std::string(name), value))
            return false;
    }
    return true;
}

}  // namespace hetpu::apps
