// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/heat/heat_options.h"

namespace hetpu::heat {

namespace {

void describe(CLI::App &app, Options &o)
{
    app.description("A Jacobi sweep of the heat (Laplace) equation on a 2-D grid split into blocks of rows, each "
                    "block kept on one accelerator (OpenCL or CUDA; the CPUs without one) for the whole run, "
                    "neighbouring blocks exchanging their edge rows every sweep. With --checkpoint-every it "
                    "checkpoints the grid through hetpu's checkpoint backend: from device memory into the device "
                    "cache tier, then down to --checkpoint-dir in the background; --restart continues from the "
                    "newest complete checkpoint.");
    const std::string side = std::to_string(kMaxSide);
    app.add_option("--rows", o.rows, "rows of the grid, its fixed boundary included (3 to " + side + ")")
        ->type_name("R")
        ->capture_default_str()
        ->check(apps::whole_in(3, kMaxSide));
    app.add_option("--cols", o.cols, "columns of the grid, its fixed boundary included (3 to " + side + ")")
        ->type_name("C")
        ->capture_default_str()
        ->check(apps::whole_in(3, kMaxSide));
    app.add_option("--blocks", o.blocks, "blocks of rows (1 to --rows), block b on device b modulo the devices")
        ->type_name("B")
        ->capture_default_str()
        ->check(apps::whole_in(1, kMaxSide));
    app.add_option("--iterations", o.iterations, "sweeps in all; a --restart run continues up to this many")
        ->type_name("N")
        ->capture_default_str()
        ->check(apps::whole_in(1, uint64_t{1} << 40));
    app.add_flag("--verify", o.verify, "compare the final grid bit for bit with a sweep of the whole grid on the host");
    app.add_option("--json", o.json_path, "append the run's record to FILE as one JSON line")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--seed", o.seed, "seed of the initial interior values")
        ->type_name("S")
        ->capture_default_str()
        ->check(apps::whole_in(0, UINT64_MAX));
    app.add_option("--output", o.output_path, "write the final grid (raw float32, row after row)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    apps::add_checkpoint_options(app, o.checkpoint_every, o.checkpoint_dir, o.restart,
                                 "checkpoint the grid every K sweeps into --checkpoint-dir (asynchronous; from device "
                                 "memory when the blocks are on devices)",
                                 "continue from the newest complete checkpoint in --checkpoint-dir (same --rows, "
                                 "--cols, --blocks and --seed; an error if there is none)");
    app.footer("Example: hetpu-heat --rows 2048 --cols 2048 --iterations 500 --checkpoint-every 50 "
               "--checkpoint-dir /tmp/heat --verify");
}

// The checks across options.
bool complete(Options &o, std::string &error)
{
    if (o.blocks > o.rows) {
        error = "--blocks " + std::to_string(o.blocks) + " is more than the " + std::to_string(o.rows) +
                " rows: every block needs a row; give --blocks " + std::to_string(o.rows) + " or fewer";
        return false;
    }
    if (!apps::check_checkpoint_flags(o.checkpoint_every, o.checkpoint_dir, o.restart, error))
        return false;
    return true;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    return apps::parse_into(describe, complete, argc, argv, out, error);
}

std::string usage(const char *prog) { return apps::help_text(describe, prog, "hetpu-heat"); }

}  // namespace hetpu::heat
