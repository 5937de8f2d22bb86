// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu settings`: every HETPU_* setting with its current value, what it accepts and its
// default; --markdown prints the table of settings the docs show; --check says whether the environment's
// values are valid (exit 1 with the first invalid one named).
#pragma once

namespace hetpu::settings_cli {

int settings_command(int argc, char **argv);

}  // namespace hetpu::settings_cli
