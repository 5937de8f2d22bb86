// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_options.h"

namespace hetpu::fft2d {

namespace {

void describe(CLI::App &app, Options &o)
{
    app.description("Forward 2D FFT of an M x N complex double matrix: the rows are divided over the processing "
                    "units (FFTW, clFFT, cuFFT row FFTs), the matrix is transposed, and the former columns are "
                    "divided the same way. STARPU_SCHED picks the policy (hepopta reads "
                    "$HETPU_HOME/profiles/fft2d.csv). Without sizes it transforms a " +
                    std::to_string(kDefaultSize) + " x " + std::to_string(kDefaultSize) + " matrix.");
    const CLI::Validator size = apps::whole_in(1, kMaxElements);
    app.add_option("-n", o.n, "columns (default M, or " + std::to_string(kDefaultSize) + ")")
        ->type_name("N")
        ->check(size);
    app.add_option("-m", o.m, "rows (default N)")->type_name("M")->check(size);
    apps::add_run_options(app, o, "rows", kMaxElements, "one FFTW 2D transform of the whole matrix");
    app.footer("Example: STARPU_SCHED=hepopta HETPU_TRADEOFF=energy hetpu-fft2d -n 2048 --verify");
}

// Defaults that depend on other options, and the checks across options.
bool complete(Options &o, std::string &error)
{
    if (o.m == 0 && o.n == 0)
        o.m = o.n = kDefaultSize;
    if (o.m == 0)
        o.m = o.n;
    if (o.n == 0)
        o.n = o.m;
    if (o.m * o.n > kMaxElements) {
        error = "-m " + std::to_string(o.m) + " x -n " + std::to_string(o.n) + " is more than " +
                std::to_string(kMaxElements) + " elements; choose smaller sizes";
        return false;
    }
    if (o.block > o.m || o.block > o.n) {
        error = "--block " + std::to_string(o.block) + " is larger than a phase's rows (m = " + std::to_string(o.m) +
                ", n = " + std::to_string(o.n) + "); give at most " + std::to_string(o.m < o.n ? o.m : o.n);
        return false;
    }
    return true;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    return apps::parse_into(describe, complete, argc, argv, out, error);
}

std::string usage(const char *prog) { return apps::help_text(describe, prog, "hetpu-fft2d"); }

}  // namespace hetpu::fft2d
