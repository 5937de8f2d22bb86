// SPDX-License-Identifier: LGPL-2.1-or-later
// The hetpu command-line tool: the front program, free of StarPU.
//
// Most commands never start StarPU (version, pareto, sim, su, ...), yet loading StarPU,
// its drivers and the apps' libraries cost ~0.1 s per process, which a script calling
// `hetpu pareto` in a loop pays every time. So this program links none of it, and the
// commands that do need StarPU (policies, calibrate) run in a second installed program,
// hetpu-starpu (tools/hetpu_starpu.cpp, in $(pkglibexecdir)), that it exec()s with the
// same arguments: one `hetpu` for the user, `--help` and exit statuses unchanged.
#include "hetpu/version.h"

#include <starpu_config.h>  // the StarPU version hetpu was built against: macros only, nothing linked

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "common/cli_args.h"
#include "tools/batch/batch_command.h"
#include "tools/mgb/mgb_command.h"
#include "tools/mgb_sim/mgb_sim_command.h"
#include "tools/models/models_command.h"
#include "tools/pareto/pareto_command.h"
#include "tools/settings/settings_command.h"
#include "tools/sim/cluster_command.h"
#include "tools/sim/sim_command.h"
#include "tools/su/su_command.h"

#ifndef HETPU_PKGLIBEXECDIR
#error "HETPU_PKGLIBEXECDIR: where hetpu-starpu is installed (tools/local.mk defines it)"
#endif

namespace {

int print_version(int, char **)
{
    std::printf("hetpu %s (built against StarPU %d.%d.%d)\n", HETPU_VERSION, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
                STARPU_RELEASE_VERSION);
    return 0;
}

// hetpu-starpu next to this program first (the build tree, where tests run it), then where
// `make install` puts it. An uninstalled build run through libtool's wrapper lives in
// .libs/: there the wrapper of hetpu-starpu, one level up, comes first, because the program
// beside it in .libs/ finds the uninstalled libraries only through that wrapper.
std::string starpu_program()
{
    std::string here;
    char exe[PATH_MAX];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        here = exe;
        here.erase(here.rfind('/') == std::string::npos ? 0 : here.rfind('/'));
    }
    const std::string installed = std::string(HETPU_PKGLIBEXECDIR) + "/hetpu-starpu";
    const bool in_libtool_dir = here.size() >= 6 && here.compare(here.size() - 6, 6, "/.libs") == 0;
    if (!here.empty()) {
        std::vector<std::string> candidates{here + "/hetpu-starpu", here + "/../hetpu-starpu"};
        if (in_libtool_dir)
            std::swap(candidates[0], candidates[1]);
        for (const std::string &c : candidates)
            if (access(c.c_str(), X_OK) == 0)
                return c;
    }
    return installed;  // named in the error if it is missing
}

// Runs `hetpu-starpu <command> args...` in place of this process.
int exec_starpu_command(const char *command, int argc, char **argv)
{
    const std::string program = starpu_program();
    std::vector<char *> args;
    args.push_back(const_cast<char *>("hetpu"));  // its messages say `hetpu <command>`
    args.push_back(const_cast<char *>(command));
    for (int i = 0; i < argc; ++i)
        args.push_back(argv[i]);
    args.push_back(nullptr);
    std::fflush(stdout);
    execv(program.c_str(), args.data());
    std::fprintf(stderr, "hetpu: %s needs StarPU, through %s: %s (is hetpu fully installed?)\n", command,
                 program.c_str(), std::strerror(errno));
    return 127;
}

int policies(int argc, char **argv) { return exec_starpu_command("policies", argc, argv); }
int calibrate(int argc, char **argv) { return exec_starpu_command("calibrate", argc, argv); }

}  // namespace

int main(int argc, char **argv)
{
    if (argc == 2 && !std::strcmp(argv[1], "--version"))
        return print_version(0, nullptr);
    const std::vector<hetpu::cli::Subcommand> commands = {
        {"policies", "list the scheduling policies STARPU_SCHED may name", policies},
        {"version", "print hetpu's version and the StarPU it was built against", print_version},
        {"sim", "simulate a policy on a machine described in a JSON scenario", hetpu::sim::sim_command},
        {"cluster-sim", "simulate a job on a cluster, central or per-node planning, the network charged",
         hetpu::sim::cluster_sim_command},
        {"calibrate", "measure time/energy profiles of an app's codelet on every worker", calibrate},
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
        {"settings", "every HETPU_* setting: value, accepted values, default (--markdown: the table the docs show)",
         hetpu::settings_cli::settings_command},
    };
    return hetpu::cli::run_subcommand("hetpu",
                                      "hetpu: StarPU extension modules for heterogeneous nodes and clusters.\n"
                                      "Run `hetpu <command> --help` for a command's options; `hetpu --version`.",
                                      commands, argc - 1, argv + 1);
}
