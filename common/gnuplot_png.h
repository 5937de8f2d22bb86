// SPDX-License-Identifier: LGPL-2.1-or-later
// Drawing a PNG with gnuplot, the one way every hetpu command does it: the script goes to
// gnuplot's standard input (data inline as `$name << EOD` blocks, no temporary files), the
// image is written beside its destination and renamed into place only when gnuplot succeeded,
// so a failed plot never leaves a truncated PNG behind.
#pragma once

#include <string>

namespace hetpu {

// A gnuplot string literal for text (single quotes doubled).
std::string gnuplot_quoted(const std::string &text);

// Runs gnuplot on `script` (everything after the terminal and output lines, which this adds:
// pngcairo of width x height). Throws std::runtime_error saying what went wrong, naming the
// package to install when gnuplot is missing.
void gnuplot_png(const std::string &script, const std::string &png, int width = 900, int height = 560);

}  // namespace hetpu
