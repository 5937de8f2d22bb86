// The hetpu command-line tool. Subcommands are added by the modules that need them.
#include <hetpu/hetpu.h>

#include <cstdio>
#include <cstring>

#include "tools/calibrate/calibrate_command.h"
#include "tools/batch/batch_command.h"
#include "tools/mgb/mgb_command.h"
#include "tools/mgb_sim/mgb_sim_command.h"
#include "tools/models/models_command.h"
#include "tools/pareto/pareto_command.h"
#include "tools/sim/sim_command.h"
#include "tools/su/su_command.h"

namespace {

void usage(FILE *out)
{
    std::fputs("usage: hetpu <command>\n"
               "commands:\n"
               "  policies   list the scheduling policies STARPU_SCHED may name\n"
               "  version    print hetpu's version and the StarPU it was built against\n"
               "  sim        simulate a policy on a machine described in a JSON scenario\n"
               "  calibrate  measure time/energy profiles of an app's codelet on every worker\n"
               "  pareto     Pareto-optimal time/energy workload distributions of a profile CSV\n"
               "  su         service units: rate, charge, compare charging models, report the ledger\n"
               "  mgb        the node-wide MGB GPU arbiter: status (reservations per device and process), reset\n"
               "  mgb-sim    simulate a batch of GPU jobs under sa, cg, mgb, mgb-exact or schedgpu (JSON scenario)\n"
               "  batch      run a file of shell commands N at a time (timeouts, exit status, throughput)\n"
               "  models     PLB-HAC models saved across runs: list, show, clear\n"
               "  help       this text\n",
               out);
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!std::strcmp(cmd, "policies")) {
        hetpu_print_policies(stdout);
        return 0;
    }
    if (!std::strcmp(cmd, "calibrate"))
        return hetpu::calibrate::calibrate_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "pareto"))
        return hetpu::pareto_cli::pareto_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "sim"))
        return hetpu::sim::sim_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "su"))
        return hetpu::su::su_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "mgb"))
        return hetpu::mgb_cli::mgb_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "mgb-sim"))
        return hetpu::mgb_sim::mgb_sim_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "batch"))
        return hetpu::batch::batch_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "models"))
        return hetpu::models_cli::models_command(argc - 2, argv + 2);
    if (!std::strcmp(cmd, "version")) {
        std::printf("hetpu %s (built against StarPU %d.%d.%d)\n", HETPU_VERSION, STARPU_MAJOR_VERSION,
                    STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
        return 0;
    }
    if (!std::strcmp(cmd, "help") || !std::strcmp(cmd, "--help") || !std::strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    std::fprintf(stderr, "hetpu: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
