// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/calibrate/calibrate_options.h"

#include <CLI/CLI.hpp>

#include <functional>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "common/cli_args.h"

namespace hetpu::calibrate {

uint64_t default_dim(const std::string &app) { return app == "fft2d" ? 1024 : 512; }

std::vector<uint64_t> parse_sizes(const std::string &text)
{
    std::vector<uint64_t> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const std::size_t c1 = item.find(':');
        if (c1 == std::string::npos) {
            uint64_t v = 0;
            if (!cli::parse_whole_number(item, v) || v == 0)
                throw std::invalid_argument("size '" + item + "' is not a positive integer");
            out.push_back(v);
            continue;
        }
        const std::size_t c2 = item.find(':', c1 + 1);
        uint64_t from = 0, to = 0, step = 0;
        if (c2 == std::string::npos || !cli::parse_whole_number(item.substr(0, c1), from) ||
            !cli::parse_whole_number(item.substr(c1 + 1, c2 - c1 - 1), to) ||
            !cli::parse_whole_number(item.substr(c2 + 1), step) || from == 0 || step == 0 || to < from)
            throw std::invalid_argument("size range '" + item +
                                        "' is not FROM:TO:STEP with 0 < FROM <= TO and STEP > 0");
        if ((to - from) / step >= 10000)
            throw std::invalid_argument("size range '" + item + "' has more than 10000 sizes");
        for (uint64_t v = from; v <= to; v += step)
            out.push_back(v);
    }
    if (out.empty())
        throw std::invalid_argument("no sizes given");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {

// A CLI11 check from a function that returns "" or what is wrong with the value (CLI11
// prefixes the option's name).
CLI::Validator check(std::function<std::string(const std::string &)> why)
{
    return CLI::Validator([why](std::string &v) { return why(v); }, "");
}

void describe_options(CLI::App &app, Options &o)
{
    app.description(
        "Measures, on every StarPU worker at once (the paper's concurrent abstract processors, so contention is "
        "included), the execution time and dynamic energy of one block of each size, repeating until both sample "
        "means lie within a 95% Student-t interval of the requested precision. Writes the profile CSV `hetpu "
        "pareto` and the hepopta/htpopta policies read (default $HETPU_HOME/profiles/<app>.csv), one row per "
        "(processor, size) with the energy source of each point. STARPU_SCHED is ignored: calibration runs under "
        "its own placement (one block per worker); HETPU_ENERGY=rapl|nvml|model|auto chooses the energy source.");
    app.add_option("--app", o.app, "the app whose codelet is measured")
        ->required()
        ->type_name("matmul|fft2d")
        ->check(check([](const std::string &v) {
            return v == "matmul" || v == "fft2d" ? "" : "'" + v + "' is not an app calibrate knows (matmul, fft2d)";
        }));
    app.add_option_function<std::string>(
           "--sizes", [&o](const std::string &v) { o.sizes = parse_sizes(v); },
           "elements per processor: 64,128 or FROM:TO:STEP (matmul: columns of B and C; fft2d: rows)")
        ->required()
        ->type_name("LIST")
        ->check(check([](const std::string &v) {
            try {
                parse_sizes(v);
                return std::string();
            } catch (const std::invalid_argument &e) {
                return std::string(e.what()) + " (e.g. --sizes 64:1024:64)";
            }
        }));
    app.add_option("--dim", o.dim, "matmul: m = k (default 512); fft2d: row length N (default 1024)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{65536}));
    app.add_option("--precision", o.rule.precision, "relative half-width of the 95% interval, e.g. 0.1 for 10%")
        ->capture_default_str()
        ->check(check([](const std::string &v) {
            double d = 0;
            return cli::parse_real(v, d) && d > 0 && d < 1 ? "" : "needs a fraction in (0, 1), e.g. 0.1 for 10%";
        }));
    app.add_option("--min-reps", o.rule.min_reps, "repetitions at least (a confidence interval needs two)")
        ->capture_default_str()
        ->check(CLI::Range(2u, 100000u));
    app.add_option("--max-reps", o.rule.max_reps, "repetitions at most")
        ->capture_default_str()
        ->check(CLI::Range(2u, 100000u));
    app.add_option("--max-time", o.max_seconds, "per size: stop repeating once the processors were busy this long")
        ->capture_default_str()
        ->type_name("SECONDS")
        ->check(CLI::PositiveNumber);
    app.add_option("--output", o.output, "the profile CSV (default $HETPU_HOME/profiles/<app>.csv)")
        ->type_name("FILE.csv");
    app.add_option("--cpu-tdp", o.cpu_tdp_w, "the model source's CPU TDP, used where no sensor (RAPL) exists")
        ->capture_default_str()
        ->type_name("WATTS")
        ->check(CLI::PositiveNumber);
    app.add_option("--cores-per-socket", o.cores_per_socket,
                   "the model source's cores per socket (default: the "
                   "machine's)")
        ->check(CLI::Range(1, 4096));
    app.add_option("--gpu-tdp", o.gpu_tdp_w, "the model source's GPU TDP, used where no sensor (NVML) exists")
        ->capture_default_str()
        ->type_name("WATTS")
        ->check(CLI::PositiveNumber);
}

}  // namespace

Options parse_options(int argc, const char *const *argv)
{
    Options o;
    CLI::App app{"", "hetpu calibrate"};
    describe_options(app, o);
    try {
        cli::parse_or_throw(app, argc, argv);
    } catch (const CLI::CallForHelp &) {
        o.help = true;
        return o;
    }
    if (o.rule.min_reps > o.rule.max_reps)
        throw CLI::ValidationError("--min-reps " + std::to_string(o.rule.min_reps) + " is larger than --max-reps " +
                                   std::to_string(o.rule.max_reps));
    if (o.dim == 0)
        o.dim = default_dim(o.app);
    return o;
}

std::string usage()
{
    Options defaults;
    CLI::App app{"", "hetpu calibrate"};
    describe_options(app, defaults);
    return app.help();
}

}  // namespace hetpu::calibrate
