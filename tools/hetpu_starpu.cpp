// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu-starpu: the hetpu commands that need StarPU, exec()d by the front program
// (tools/hetpu_front.cpp) as `hetpu-starpu <command> args...`, so that the commands that
// do not need it start without loading it. Not meant to be run by hand; it answers the
// same `--help` as `hetpu <command> --help`.
#include <hetpu/hetpu.h>

#include <cstdio>

#include "common/cli_args.h"
#include "tools/calibrate/calibrate_command.h"

namespace {

int print_policies(int, char **)
{
    hetpu_print_policies(stdout);
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    const std::vector<hetpu::cli::Subcommand> commands = {
        {"policies", "list the scheduling policies STARPU_SCHED may name", print_policies},
        {"calibrate", "measure time/energy profiles of an app's codelet on every worker",
         hetpu::calibrate::calibrate_command},
    };
    return hetpu::cli::run_subcommand("hetpu",
                                      "hetpu-starpu: the hetpu commands that start StarPU (run them as `hetpu "
                                      "<command>`).",
                                      commands, argc - 1, argv + 1);
}
