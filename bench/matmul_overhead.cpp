// SPDX-License-Identifier: LGPL-2.1-or-later
// matmul_overhead: what does running a GEMM through hetpu + StarPU cost compared with
// calling BLAS directly? In one process and on the same matrices:
//   1. cblas_dgemm on the whole problem, OpenBLAS single-threaded, best of R;
//   2. StarPU with exactly one CPU worker (no OpenCL, no CUDA) running the matmul app's
//      job (the same codelet, columns cut into --block blocks), best of R, timed from
//      before A is registered to after it is unregistered.
// Reports both GFLOP/s and hetpu/direct (target >= 0.80) as a human line and a JSON line.
// Exit status: 0 (1 if StarPU cannot start or a result is wrong, or with --enforce when
// the ratio misses the target).
#include <hetpu/hetpu.h>

#include <cblas.h>

#include <chrono>
#include <optional>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "apps/matmul/matmul_codelets.h"
#include "apps/matmul/matmul_job.h"
#include "apps/matmul/matmul_options.h"
#include "apps/matmul/matmul_problem.h"
#include "apps/matmul/matmul_report.h"
#include "common/json_line.h"
#include "common/cli_args.h"

namespace {

using namespace hetpu::matmul;

constexpr double kTarget = 0.80;

struct BenchOptions {
    uint64_t n = 2048;
    uint64_t block = 512;
    unsigned reps = 3;
    uint64_t seed = 42;
    std::string json_path;
    bool enforce = false;
};

// Returns nothing to run, else the exit status (0 after --help, 2 on bad input, printed).
std::optional<int> parse(int argc, char **argv, BenchOptions &o)
{
    CLI::App app{"Compare a direct single-threaded cblas_dgemm with the same product run by hetpu on StarPU with one "
                 "CPU worker (N x N x N, double).",
                 "matmul_overhead"};
    app.add_option("-n", o.n, "matrix size")->capture_default_str()->check(CLI::Range(uint64_t{1}, uint64_t{65536}));
    CLI::Option *block = app.add_option("--block", o.block, "columns per block")
                             ->capture_default_str()
                             ->check(CLI::Range(uint64_t{1}, uint64_t{kMaxDimension}));
    app.add_option("--reps", o.reps, "repetitions (the best counts)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    app.add_option("--seed", o.seed, "matrix seed")->capture_default_str();
    app.add_option("--json", o.json_path, "also append the result line to FILE")->type_name("FILE");
    app.add_flag("--enforce", o.enforce, "exit 1 when hetpu/direct < 0.80");
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return rc;
    if (o.block > o.n) {
        if (block->count() > 0) {
            std::fprintf(
                stderr, "matmul_overhead: --block %llu is larger than n = %llu: give a block of at most %llu columns\n",
                static_cast<unsigned long long>(o.block), static_cast<unsigned long long>(o.n),
                static_cast<unsigned long long>(o.n));
            return 2;
        }
        o.block = o.n;  // the default block does not fit a small n: one block
    }
    return std::nullopt;
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char **argv)
{
    BenchOptions bo;
    if (std::optional<int> rc = parse(argc, argv, bo))
        return *rc;
    const uint64_t n = bo.n;
    const int in = static_cast<int>(n);

    Problem<double> p(n, n, n, bo.seed);

    // 1. Direct BLAS, one thread: the baseline the StarPU CPU worker (one core) must match.
    openblas_set_num_threads(1);
    double direct_best = 0;
    for (unsigned r = 0; r < bo.reps; ++r) {
        p.reset_c();
        const double t0 = now_s();
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, in, in, in, 1.0, p.a.data(), in, p.b.data(), in, 0.0,
                    p.c.data(), in);
        const double t = now_s() - t0;
        if (r == 0 || t < direct_best)
            direct_best = t;
        std::fprintf(stderr, "direct dgemm rep %u/%u: %.4f s, %.2f GFLOP/s\n", r + 1, bo.reps, t, gflops(n, n, n, t));
    }
    const bool direct_ok = verify(p).ok();

    // 2. hetpu on exactly one CPU worker. The environment beats starpu_conf in StarPU, so
    // set both.
    setenv("STARPU_NCPU", "1", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_NCUDA", "0", 1);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 1;
    conf.nopencl = 0;
    conf.ncuda = 0;
    int rc = hetpu_init(&conf);
    if (rc == HETPU_INIT_HELP_SHOWN)
        return 0;
    if (rc < 0) {
        std::fprintf(stderr, "matmul_overhead: cannot start StarPU: %s\n", std::strerror(-rc));
        return 1;
    }
    codelets_init();
    const std::string policy = hetpu_policy_name();
    char workers[128] = "";
    hetpu_describe_workers(workers, sizeof workers);
    if (starpu_worker_get_count() != 1 || starpu_cpu_worker_get_count() != 1)
        std::fprintf(stderr, "matmul_overhead: warning: expected exactly 1 CPU worker, StarPU started %s\n", workers);

    Options mo;
    mo.m = mo.n = mo.k = n;
    mo.block = bo.block;
    mo.precision = Precision::Double;
    double hetpu_best = 0, makespan_best = 0;
    bool hetpu_ok = true;
    for (unsigned r = 0; r < bo.reps && rc == 0; ++r) {
        p.reset_c();
        struct hetpu_divisible_report report;
        const double t0 = now_s();
        rc = run_once(p, mo, &report);
        const double t = now_s() - t0;
        if (rc != 0) {
            std::fprintf(stderr, "matmul_overhead: hetpu run failed: %s\n", std::strerror(-rc));
            break;
        }
        if (r == 0 || t < hetpu_best) {
            hetpu_best = t;
            makespan_best = report.makespan_s;
        }
        std::fprintf(stderr, "hetpu (%s, %s, %u blocks) rep %u/%u: %.4f s, %.2f GFLOP/s\n", policy.c_str(), workers,
                     report.blocks, r + 1, bo.reps, t, gflops(n, n, n, t));
        if (r == 0)
            hetpu_ok = verify(p).ok();
    }
    codelets_shutdown();
    hetpu_shutdown();
    if (rc != 0)
        return 1;

    const double direct_gf = gflops(n, n, n, direct_best);
    const double hetpu_gf = gflops(n, n, n, hetpu_best);
    const double ratio = direct_gf > 0 ? hetpu_gf / direct_gf : 0;
    const bool pass = ratio >= kTarget;
    const bool verified = direct_ok && hetpu_ok;

    std::printf("matmul_overhead: n=%llu block=%llu best of %u: direct dgemm (1 thread) %.2f GFLOP/s, "
                "hetpu (%s, %s) %.2f GFLOP/s, ratio %.3f (target >= %.2f): %s%s\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(bo.block), bo.reps, direct_gf,
                policy.c_str(), workers, hetpu_gf, ratio, kTarget, pass ? "met" : "MISSED",
                verified ? "" : "; WRONG RESULT");

    const hetpu::JsonRecord w = {{"bench", "matmul_overhead"},
                                 {"policy", policy.c_str()},
                                 {"workers", workers},
                                 {"precision", "double"},
                                 {"n", static_cast<unsigned long long>(n)},
                                 {"block", static_cast<unsigned long long>(bo.block)},
                                 {"reps", bo.reps},
                                 {"direct_s", direct_best},
                                 {"direct_gflops", direct_gf},
                                 {"hetpu_s", hetpu_best},
                                 {"hetpu_makespan_s", makespan_best},
                                 {"hetpu_gflops", hetpu_gf},
                                 {"ratio", ratio},
                                 {"target", kTarget},
                                 {"target_met", pass},
                                 {"verified", verified}};
    std::printf("%s\n", hetpu::json_line(w).c_str());
    if (!bo.json_path.empty()) {
        std::FILE *f = std::fopen(bo.json_path.c_str(), "a");
        if (!f || std::fprintf(f, "%s\n", hetpu::json_line(w).c_str()) < 0 || std::fclose(f) != 0) {
            std::fprintf(stderr, "matmul_overhead: cannot write --json file '%s': %s\n", bo.json_path.c_str(),
                         std::strerror(errno));
            return 1;
        }
    }
    if (!verified) {
        std::fprintf(stderr, "matmul_overhead: the %s result is wrong\n", direct_ok ? "hetpu" : "direct dgemm");
        return 1;
    }
    return bo.enforce && !pass ? 1 : 0;
}
