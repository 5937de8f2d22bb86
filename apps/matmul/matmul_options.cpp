// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_options.h"

namespace hetpu::matmul {

const char *precision_name(Precision p) { return p == Precision::Single ? "single" : "double"; }

namespace {

void describe(CLI::App &app, Options &o)
{
    app.description("Multiply C = A x B (A is M x K, B is K x N, column-major) with the columns of B and C divided "
                    "into blocks by hetpu; the policy comes from STARPU_SCHED. Without sizes it multiplies " +
                    std::to_string(kDefaultSize) + " x " + std::to_string(kDefaultSize) + " matrices.");
    const CLI::Validator size = apps::whole_in(1, kMaxDimension);
    app.add_option("-n", o.n, "columns of B and C (default " + std::to_string(kDefaultSize) + ")")
        ->type_name("N")
        ->check(size);
    app.add_option("-m", o.m, "rows of A and C (default N)")->type_name("M")->check(size);
    app.add_option("-k", o.k, "columns of A, rows of B (default N)")->type_name("K")->check(size);
    app.add_option_function<std::string>(
           "--precision",
           [&o](const std::string &p) {
               o.precision = p == "single" || p == "float" || p == "s" ? Precision::Single : Precision::Double;
           },
           "single or double (default double)")
        ->type_name("P")
        ->check(CLI::IsMember({"single", "double", "float", "s", "d"}));
    app.add_option("--clblast-min-indirect", o.clblast_min_indirect,
                   "OpenCL: CLBlast computes a block with its indirect GEMM kernel when m x n x k >= S^3, else "
                   "with its direct one (default " +
                       std::to_string(kDefaultClblastMinIndirect) +
                       "; 0: CLBlast's own tuning, whose direct kernel ran narrow blocks at half the speed on PoCL)")
        ->type_name("S")
        ->check(apps::whole_in(0, kMaxDimension));
    app.add_option("--granule", o.granule,
                   "block widths are multiples of G columns, except a last block holding what remains (default " +
                       std::to_string(kDefaultGranule) + " when n has at least " + std::to_string(kDefaultGranule) +
                       " such granules and --block is a multiple of it, else 1; " +
                       "GEMM kernels compute whole tiles: CLBlast pads a block to its tile)")
        ->type_name("G")
        ->check(apps::whole_in(1, kMaxDimension));
    app.add_option("--max-columns-mib", o.max_columns_mib,
                   "MiB of B's and C's columns one process may hold (default 0: no limit); on several MPI ranks each "
                   "holds only the columns it computes")
        ->type_name("MIB")
        ->check(apps::whole_in(0, uint64_t{1} << 40));
    apps::add_run_options(app, o, "columns", kMaxDimension, "a long double reference, every column of C");
    app.footer("Example: STARPU_SCHED=dmda hetpu-matmul -n 2048 --block 256 --verify");
}

}  // namespace

namespace {

// Defaults that depend on other options, and the checks across options.
bool complete(Options &o, std::string &error)
{
    if (o.n == 0)
        o.n = kDefaultSize;
    if (o.m == 0)
        o.m = o.n;
    if (o.k == 0)
        o.k = o.n;
    if (o.block > o.n) {
        error = "--block " + std::to_string(o.block) + " is larger than n = " + std::to_string(o.n) +
                ": give a block of at most " + std::to_string(o.n) + " columns";
        return false;
    }
    if (o.granule == 0) {
        // Coarser blocks than kDefaultGranule cost a planner its balance on small jobs
        // (fewer than that many granules), and a user's --block is kept as given.
        const bool fits = o.n >= kDefaultGranule * kDefaultGranule && o.block % kDefaultGranule == 0;
        o.granule = fits ? kDefaultGranule : 1;
    }
    if (o.granule > o.n) {
        error = "--granule " + std::to_string(o.granule) + " is larger than n = " + std::to_string(o.n) +
                ": give a granule of at most " + std::to_string(o.n) + " columns";
        return false;
    }
    if (o.block % o.granule != 0) {
        error = "--block " + std::to_string(o.block) + " is not a multiple of --granule " + std::to_string(o.granule) +
                ": give a block of " + std::to_string(o.block / o.granule * o.granule + o.granule) +
                " columns, or another granule";
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
    return true;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    return apps::parse_into(describe, complete, argc, argv, out, error);
}

std::string usage(const char *prog) { return apps::help_text(describe, prog, "hetpu-matmul"); }

}  // namespace hetpu::matmul
