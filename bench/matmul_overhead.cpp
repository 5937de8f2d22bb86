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
#include "runtime/core/json_line.h"

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

const char *const kUsage =
    "usage: matmul_overhead [-n N] [--block B] [--reps R] [--seed S] [--json FILE] [--enforce]\n"
    "Compare a direct single-threaded cblas_dgemm with the same product run by hetpu on\n"
    "StarPU with one CPU worker (N x N x N, double, default N = 2048, B = 512, R = 3).\n"
    "  --json FILE   also append the result line to FILE\n"
    "  --enforce     exit 1 when hetpu/direct < 0.80\n";

// Returns 0 to run, 1 after --help, 2 on bad input (message printed).
int parse(int argc, char **argv, BenchOptions &o)
{
    std::string error;
    bool have_block = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        auto value = [&](const char *name) -> const char * {
            if (i + 1 >= argc) {
                error = std::string("option ") + name + " needs a value (run with --help)";
                return nullptr;
            }
            return argv[++i];
        };
        const char *v = nullptr;
        uint64_t x = 0;
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 1;
        } else if (a == "--enforce") {
            o.enforce = true;
        } else if (a == "-n") {
            if (!(v = value("-n")) || !parse_unsigned(v, "matrix size -n", 1, 65536, o.n, error))
                break;
        } else if (a == "--block") {
            if (!(v = value("--block")) || !parse_unsigned(v, "block size --block", 1, kMaxDimension, o.block, error))
                break;
            have_block = true;
        } else if (a == "--reps") {
            if (!(v = value("--reps")) || !parse_unsigned(v, "repetition count --reps", 1, 1000, x, error))
                break;
            o.reps = static_cast<unsigned>(x);
        } else if (a == "--seed") {
            if (!(v = value("--seed")) || !parse_unsigned(v, "seed --seed", 0, UINT64_MAX, o.seed, error))
                break;
        } else if (a == "--json") {
            if (!(v = value("--json")))
                break;
            o.json_path = v;
        } else {
            error = "unknown option '" + std::string(a) + "': run with --help for the list of options";
            break;
        }
    }
    if (error.empty() && o.block > o.n) {
        if (have_block) {
            error = "--block " + std::to_string(o.block) + " is larger than n = " + std::to_string(o.n) +
                    ": give a block of at most " + std::to_string(o.n) + " columns";
        } else {
            o.block = o.n;  // the default block does not fit a small n: one block
        }
    }
    if (!error.empty()) {
        std::fprintf(stderr, "matmul_overhead: %s\n", error.c_str());
        return 2;
    }
    return 0;
}

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char **argv)
{
    BenchOptions bo;
    if (int rc = parse(argc, argv, bo))
        return rc == 1 ? 0 : rc;
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
        std::fprintf(stderr, "hetpu (%s, %s, %u blocks) rep %u/%u: %.4f s, %.2f GFLOP/s\n", policy.c_str(),
                     workers, report.blocks, r + 1, bo.reps, t, gflops(n, n, n, t));
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

    const hetpu::JsonRecord w = {
        {"bench", "matmul_overhead"},
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
