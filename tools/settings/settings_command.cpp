// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/settings/settings_command.h"

#include <cstdio>
#include <string>

#include "common/cli_args.h"
#include "common/settings.h"

namespace hetpu::settings_cli {

int settings_command(int argc, char **argv)
{
    CLI::App app{"Every HETPU_* setting: its value in this environment, what it accepts, its default.",
                 "hetpu settings"};
    bool markdown = false, check = false;
    app.add_flag("--markdown", markdown,
                 "print the Markdown table of settings the docs show (tools/update_settings_table.sh) instead");
    app.add_flag("--check", check, "check the values set in this environment; exit 1 naming the first invalid one");
    if (std::optional<int> rc = cli::parse_args(app, argc, argv))
        return *rc;
    if (check) {
        const std::string bad = Settings().first_error();
        if (!bad.empty()) {
            std::fprintf(stderr, "hetpu settings: %s\n", bad.c_str());
            return 1;
        }
        std::puts("every HETPU_* setting set in this environment is valid");
        return 0;
    }
    const std::string text = markdown ? settings_markdown_table() : settings_listing();
    std::fputs(text.c_str(), stdout);
    return 0;
}

}  // namespace hetpu::settings_cli
