// SPDX-License-Identifier: LGPL-2.1-or-later
// The hetpu command-line tool. Subcommands are added by the modules that need them.
#include <hetpu/hetpu.h>

#include <cstdio>
#include <cstring>

#include "tools/batch/batch_command.h"
#include "tools/calibrate/calibrate_command.h"
#include "common/cli_args.h"
#include "tools/mgb/mgb_command.h"
#include "tools/mgb_sim/mgb_sim_command.h"
#include "tools/models/models_command.h"
#include "tools/pareto/pareto_command.h"
#include "tools/settings/settings_command.h"
#include "tools/sim/sim_command.h"
#include "tools/su/su_command.h"

namespace {

int print_policies(int, char **)
{
    hetpu_print_policies(stdout);
    return 0;
}

int print_version(int, char **)
{
    std::printf("hetpu %s (built against StarPU %d.%d.%d)\n", HETPU_VERSION, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
                STARPU_RELEASE_VERSION);
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc == 2 && !std::strcmp(argv[1], "--version"))
        return print_version(0, nullptr);
    const std::vector<hetpu::cli::Subcommand> commands = {
        {"policies", "list the scheduling policies STARPU_SCHED may name", print_policies},
        {"version", "print hetpu's version and the StarPU it was built against", print_version},
        {"sim", "simulate a policy on a machine described in a JSON scenario", hetpu::sim::sim_command},
        {"calibrate", "measure time/energy profiles of an app's codelet on every worker",
         hetpu::calibrate::calibrate_command},
        {"pareto", "Pareto-optimal time/energy workload distributions of a profile CSV",
         hetpu::pareto_cli::pareto_command},
        {"su", "service units: rate, charge, compare charging models, report the ledger", hetpu::su::su_command},
        {"mgb", "the node-wide MGB GPU arbiter: status (reservations per device and process), reset",
         hetpu::mgb_cli::mgb_command},
        {"mgb-sim", "simulate a batch of GPU jobs under sa, cg, mgb, mgb-exact or schedgpu (JSON scenario)",
         hetpu::mgb_sim::mgb_sim_command},
        {"batch", "run a file of shell commands N at a time (timeouts, exit status, throughput)",
         hetpu::batch::batch_command},
        {"models", "PLB-HAC models saved across runs: list, show, clear", hetpu::models_cli::models_command},
        {"settings", "every HETPU_* setting: value, accepted values, default (--markdown: the README's table)",
         hetpu::settings_cli::settings_command},
    };
    return hetpu::cli::run_subcommand("hetpu",
                                      "hetpu: StarPU extension modules for heterogeneous nodes and clusters.\n"
                                      "Run `hetpu <command> --help` for a command's options; `hetpu --version`.",
                                      commands, argc - 1, argv + 1);
}
