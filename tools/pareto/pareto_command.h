// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu pareto`: the globally Pareto-optimal workload distributions of a profile CSV
// (HEPOPTA for dynamic energy, HTPOPTA for total energy), the load-balanced distribution
// and the HEPOPTA paper's metrics, as a table or JSON, optionally plotted with gnuplot.
#pragma once

#include <string>

#include "sched_policies/pareto/core/front_metrics.h"
#include "sched_policies/pareto/core/load_balanced.h"
#include "sched_policies/pareto/core/profile_csv.h"

namespace hetpu::pareto_cli {

struct Args {
    std::string profiles;  // CSV path
    std::uint64_t workload = 0;
    EnergyObjective objective = EnergyObjective::Dynamic;
    double base_power_w = 0;
    bool json = false;
    std::string plot;                     // PNG path, "" for none
    std::vector<std::string> processors;  // --processors: the expected set, "" for any
    bool base_power_given = false;        // else htpopta takes P_S from the CSV
};

// The command line (argv without the subcommand). Throws CLI11's ParseError naming the
// problem, CLI::CallForHelp after --help. The options are CLI11's (common/cli_args.h).
Args parse_args(int argc, const char *const *argv);

// Everything the command prints, computed from a parsed CSV (pure: no files, no gnuplot).
struct Result {
    Args args;
    ProfileSet set;
    GranularProfiles granular;
    std::vector<Distribution> front;  // increasing energy
    LoadBalanced load_balanced;
    FrontMetrics metrics;
    std::vector<std::string> sources;  // energy sources named by the CSV
};

// Throws ProfileCsvError / InvalidProfileError / UnreachableWorkloadError (with a message
// that says what to change).
Result compute(const Args &args, const ProfileSet &set);

std::string render_json(const Result &r);   // one line, no newline
std::string render_table(const Result &r);  // several lines, ends with a newline

// Writes the gnuplot PNG (front + load-balanced point); throws std::runtime_error saying what
// went wrong. The PNG appears only when gnuplot succeeded.
void plot_png(const Result &r, const std::string &png);

// The whole command: returns the exit status (0, 1 on bad input, 2 on bad usage).
int pareto_command(int argc, char **argv);

}  // namespace hetpu::pareto_cli
