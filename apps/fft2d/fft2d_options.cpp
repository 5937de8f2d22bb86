// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hetpu::fft2d {

namespace {

bool parse_u64(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t &out, std::string &error)
{
    const bool digits = text && *text && std::strspn(text, "0123456789") == std::strlen(text);
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = digits ? std::strtoull(text, &end, 10) : 0;
    if (!digits || errno || v < min || v > max) {
        error = std::string(what) + " '" + (text ? text : "") + "' is not an integer in [" + std::to_string(min) +
                ", " + std::to_string(max) + "]";
        return false;
    }
    out = v;
    return true;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    Options o;
    bool have_m = false, have_n = false;
    for (int i = 1; i < argc; ++i) {
        const std::string opt = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        uint64_t x = 0;
        if (opt == "-h" || opt == "--help") {
            o.help = true;
            out = o;
            return true;
        }
        if (opt == "--verify") {
            o.verify = true;
            continue;
        }
        if (opt != "-m" && opt != "-n" && opt != "--block" && opt != "--reps" && opt != "--seed" && opt != "--json") {
            error = "unknown option '" + opt + "' (see --help)";
            return false;
        }
        if (!v) {
            error = opt + " needs a value (see --help)";
            return false;
        }
        ++i;
        if (opt == "-m") {
            if (!parse_u64(v, "-m", 1, kMaxElements, o.m, error))
                return false;
            have_m = true;
        } else if (opt == "-n") {
            if (!parse_u64(v, "-n", 1, kMaxElements, o.n, error))
                return false;
            have_n = true;
        } else if (opt == "--block") {
            if (!parse_u64(v, "--block", 1, kMaxElements, o.block, error))
                return false;
        } else if (opt == "--reps") {
            if (!parse_u64(v, "--reps", 1, 1000000, x, error))
                return false;
            o.reps = static_cast<unsigned>(x);
        } else if (opt == "--seed") {
            if (!parse_u64(v, "--seed", 0, UINT64_MAX, o.seed, error))
                return false;
        } else {  // --json
            o.json_path = v;
        }
    }
    if (!have_m && !have_n) {
        error = "give the matrix size: -n N (square) or -m M -n N";
        return false;
    }
    if (!have_m)
        o.m = o.n;
    if (!have_n)
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
    out = o;
    return true;
}

std::string usage(const char *prog)
{
    return std::string("usage: ") + prog +
           " -n N [-m M] [--block ROWS] [--reps R] [--verify] [--json FILE] [--seed S]\n"
           "Forward 2D FFT of an M x N complex double matrix (M = N unless -m is given): the\n"
           "rows are divided over the processing units (FFTW, clFFT, cuFFT row FFTs), the matrix\n"
           "is transposed, and the former columns are divided the same way. STARPU_SCHED picks\n"
           "the policy (hepopta reads $HETPU_HOME/profiles/fft2d.csv).\n"
           "  --block   rows per block when blocks are fixed (default: the runtime's)\n"
           "  --verify  compare with one FFTW 2D transform of the whole matrix\n"
           "  --json    append one JSON line per repetition to FILE\n";
}

}  // namespace hetpu::fft2d
