// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace hetpu::matmul {

const char *precision_name(Precision p) { return p == Precision::Single ? "single" : "double"; }

bool parse_unsigned(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t &out, std::string &error)
{
    const std::string range = "a whole number between " + std::to_string(min) + " and " + std::to_string(max);
    // strtoull accepts leading blanks and a minus sign (wrapping around): refuse both by
    // demanding that the text is digits only.
    bool digits = text != nullptr && *text != '\0';
    for (const char *p = text; digits && *p; ++p)
        digits = *p >= '0' && *p <= '9';
    if (!digits) {
        error = std::string(what) + " '" + (text ? text : "") + "' is invalid: give " + range;
        return false;
    }
    errno = 0;
    unsigned long long v = std::strtoull(text, nullptr, 10);
    if (errno == ERANGE || v < min || v > max) {
        error = std::string(what) + " " + text + " is out of range: give " + range;
        return false;
    }
    out = v;
    return true;
}

std::string usage(const char *prog)
{
    std::string p = prog && *prog ? prog : "matmul";
    if (size_t slash = p.rfind('/'); slash != std::string::npos)
        p.erase(0, slash + 1);  // libtool wrappers run .libs/matmul or lt-matmul
    if (p.rfind("lt-", 0) == 0)
        p.erase(0, 3);
    return "usage: " + p +
           " -n N [-m M -k K] [options]\n"
           "Multiply C = A x B (A is M x K, B is K x N, column-major) with the columns of B\n"
           "and C divided into blocks by hetpu; the policy comes from STARPU_SCHED.\n"
           "  -n N                 columns of B and C (and M = K = N unless given)\n"
           "  -m M                 rows of A and C\n"
           "  -k K                 columns of A, rows of B\n"
           "  --precision P        single or double (default double)\n"
           "  --block B            columns per block under fixed-block policies (default\n"
           "                       n / (4 x workers); the variable HETPU_BLOCK overrides it)\n"
           "  --reps R             repetitions (default 1)\n"
           "  --verify             check every column of C against a long double reference\n"
           "  --json FILE          append one JSON line per repetition to FILE\n"
           "  --seed S             seed of the pseudo-random matrices (default 42)\n"
           "  -h, --help           show this help\n"
           "Example: STARPU_SCHED=dmda " +
           p + " -n 2048 --block 256 --verify\n";
}

namespace {

struct OptionSpec {
    const char *name;
    bool takes_value;
};

constexpr OptionSpec kOptions[] = {
    {"-n", true},        {"-m", true},     {"-k", true},     {"--precision", true}, {"--block", true}, {"--reps", true},
    {"--verify", false}, {"--json", true}, {"--seed", true}, {"-h", false},         {"--help", false},
};

const OptionSpec *find_option(std::string_view name)
{
    for (const OptionSpec &o : kOptions)
        if (name == o.name)
            return &o;
    return nullptr;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    Options o;
    bool have_m = false, have_n = false, have_k = false;
    const std::string size_hint = "give -n N for a square problem or -m M -n N -k K";

    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i] ? argv[i] : "";
        std::string_view name = arg;
        const char *value = nullptr;
        // --name=value form for long options.
        size_t eq = arg.find('=');
        if (arg.substr(0, 2) == "--" && eq != std::string_view::npos) {
            name = arg.substr(0, eq);
            value = argv[i] + eq + 1;
        }
        const OptionSpec *spec = find_option(name);
        if (!spec) {
            if (!arg.empty() && arg[0] == '-')
                error = "unknown option '" + std::string(name) + "': run with --help for the list of options";
            else
                error = "unexpected argument '" + std::string(arg) +
                        "': options take the form -n N or --name VALUE (run with --help)";
            return false;
        }
        if (!spec->takes_value && value) {
            error = "option " + std::string(name) + " takes no value: write " + std::string(name) + " alone";
            return false;
        }
        if (spec->takes_value && !value) {
            if (i + 1 >= argc) {
                error = "option " + std::string(name) + " needs a value (run with --help)";
                return false;
            }
            value = argv[++i];
        }

        const std::string n(name);
        if (n == "-h" || n == "--help") {
            o.help = true;
        } else if (n == "--verify") {
            o.verify = true;
        } else if (n == "-m" || n == "-n" || n == "-k") {
            uint64_t v = 0;
            std::string what = "matrix size " + n;
            if (!parse_unsigned(value, what.c_str(), 1, kMaxDimension, v, error))
                return false;
            if (n == "-m") {
                o.m = v;
                have_m = true;
            }
            if (n == "-n") {
                o.n = v;
                have_n = true;
            }
            if (n == "-k") {
                o.k = v;
                have_k = true;
            }
        } else if (n == "--precision") {
            std::string_view p = value;
            if (p == "single" || p == "float" || p == "s") {
                o.precision = Precision::Single;
            } else if (p == "double" || p == "d") {
                o.precision = Precision::Double;
            } else {
                error = "unknown precision '" + std::string(p) + "': use --precision single or --precision double";
                return false;
            }
        } else if (n == "--block") {
            if (!parse_unsigned(value, "block size --block", 1, kMaxDimension, o.block, error))
                return false;
        } else if (n == "--reps") {
            uint64_t r = 0;
            if (!parse_unsigned(value, "repetition count --reps", 1, 1000000, r, error))
                return false;
            o.reps = static_cast<unsigned>(r);
        } else if (n == "--json") {
            if (*value == '\0') {
                error = "option --json needs a file name: --json results.jsonl";
                return false;
            }
            o.json_path = value;
        } else if (n == "--seed") {
            if (!parse_unsigned(value, "seed --seed", 0, UINT64_MAX, o.seed, error))
                return false;
        }
    }

    if (o.help) {
        out = o;
        return true;
    }
    if (!have_n) {
        error = have_m || have_k ? "missing -n: " + size_hint : "missing matrix size: " + size_hint;
        return false;
    }
    if (!have_m)
        o.m = o.n;
    if (!have_k)
        o.k = o.n;
    if (o.block > o.n) {
        error = "--block " + std::to_string(o.block) + " is larger than n = " + std::to_string(o.n) +
                ": give a block of at most " + std::to_string(o.n) + " columns";
        return false;
    }
    // A, B and C must fit in memory: refuse sizes whose byte count overflows outright.
    const long double elements =
        static_cast<long double>(o.m) * o.k + static_cast<long double>(o.k) * o.n + static_cast<long double>(o.m) * o.n;
    const long double bytes = elements * (o.precision == Precision::Single ? 4 : 8);
    if (bytes > static_cast<long double>(SIZE_MAX) / 2) {
        error = "matrices of m = " + std::to_string(o.m) + ", n = " + std::to_string(o.n) +
                ", k = " + std::to_string(o.k) + " cannot be addressed: choose smaller sizes";
        return false;
    }
    out = o;
    return true;
}

}  // namespace hetpu::matmul
