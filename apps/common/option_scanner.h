// SPDX-License-Identifier: LGPL-2.1-or-later
// The command-line walk the grn and kmeans apps share: "--name value", "--name=value" and
// flags, checked against a table of known options, each handed to the app's own handler.
// Pure C++, no StarPU.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace hetpu::apps {

struct OptionSpec {
    const char *name;
    bool takes_value;
};

// Calls handle(name, value) for every option in argv[1..argc), value null for flags.
// Returns false with `error` set for an unknown option, a stray argument (`positional_hint`
// says what to do instead), a flag given a value, a missing value, or when `handle`
// returns false (it sets `error` itself).
bool scan_options(int argc, const char *const argv[], const OptionSpec *specs, std::size_t nspecs,
                  const char *positional_hint,
                  const std::function<bool(const std::string &name, const char *value)> &handle, std::string &error);

}  // namespace hetpu::apps
