// SPDX-License-Identifier: LGPL-2.1-or-later
// Speed of PLB-HAC's block-size solve (plbhac_solve: system (3), then granule rounding)
// for 2, 4 and 8 PUs with a mix of increasing non-linear curves, by both solvers: Ipopt
// (HETPU_PLBHAC_SOLVER=ipopt, the paper's) and auto (the equal-finish search, since these
// curves increase). The scheduler runs this once per virtual step on the worker that
// enters the step, so it must stay far below a block's duration. Prints the median, min
// and max of `reps` timed calls (after one untimed warm-up) per size and solver, and the
// ratio of the medians, as a table then JSON lines.
// Usage: plbhac_solve_speed [reps]   (default 200)
#include "common/json_line.h"
#include "common/cli_args.h"
#include "sched_policies/plbhac/core/plbhac_solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

// latency + b x + a x^2 + c x ln x: covers the linear, quadratic and n log n fits.
class Curve : public hetpu::TimeCurve {
public:
    Curve(double l, double b, double a, double c) : l_(l), b_(b), a_(a), c_(c) {}
    hetpu::TimeEval eval(double x) const override
    {
        const double lx = std::log(x);
        return hetpu::TimeEval{l_ + b_ * x + a_ * x * x + c_ * x * lx, b_ + 2 * a_ * x + c_ * (lx + 1),
                               2 * a_ + c_ / x};
    }

private:
    double l_, b_, a_, c_;
};

struct Row {
    int pus;
    const char *solver;
    double median_ms, min_ms, max_ms;
    int iterations, solves;
};

Row measure(int npu, int reps, hetpu::PlbhacSolver solver)
{
    std::vector<std::unique_ptr<Curve>> curves;
    std::vector<hetpu::PlbhacPu> pus(npu);
    for (int p = 0; p < npu; ++p) {
        // Alternate "CPU-like" (quadratic, no transfer) and "GPU-like" (x ln x + latency,
        // with a linear transfer curve) PUs, speeds spread over about 1:8.
        if (p % 2 == 0) {
            curves.emplace_back(new Curve(1e-4 * p, 1e-6 * (1 + p), 1e-13 * (1 + p), 0));
            pus[p].exec = curves.back().get();
        } else {
            curves.emplace_back(new Curve(5e-4, 0, 0, 1e-8 * p));
            pus[p].exec = curves.back().get();
            curves.emplace_back(new Curve(2e-4, 1e-7, 0, 0));
            pus[p].transfer = curves.back().get();
        }
    }
    hetpu::PlbhacSolveOptions opt;
    opt.granule = 64;
    opt.solver = solver;
    const std::int64_t W = 4000000;

    hetpu::plbhac_solve(pus, W, opt);  // warm-up: first Ipopt/MUMPS use loads libraries
    std::vector<double> ms;
    hetpu::PlbhacSolution s;
    for (int r = 0; r < reps; ++r) {
        s = hetpu::plbhac_solve(pus, W, opt);
        ms.push_back(s.solve_time_s * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    return Row{npu,
               solver == hetpu::PlbhacSolver::Ipopt ? "ipopt" : "auto",
               ms[ms.size() / 2],
               ms.front(),
               ms.back(),
               s.ipopt_iterations,
               s.nlp_solves};
}

}  // namespace

int main(int argc, char **argv)
{
    int reps = 200;
    std::vector<int> pu_counts = {2, 4, 8};
    CLI::App app{"Time of PLB-HAC's block-size solve per virtual step.", "plbhac_solve_speed"};
    app.add_option("reps", reps, "solves per case")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--pus", pu_counts, "PU counts to measure (e.g. --pus 8,64,256,1024)")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    std::vector<Row> rows;
    for (int npu : pu_counts) {
        rows.push_back(measure(npu, reps, hetpu::PlbhacSolver::Ipopt));
        rows.push_back(measure(npu, reps, hetpu::PlbhacSolver::Auto));
    }
    std::printf("%4s %-6s %11s %9s %9s %6s %6s %13s\n", "PUs", "solver", "median_ms", "min_ms", "max_ms", "iters",
                "solves", "auto/ipopt");
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row &r = rows[i];
        const bool second = i % 2 == 1;
        std::printf("%4d %-6s %11.3f %9.3f %9.3f %6d %6d", r.pus, r.solver, r.median_ms, r.min_ms, r.max_ms,
                    r.iterations, r.solves);
        if (second && rows[i - 1].median_ms > 0)
            std::printf(" %13.4f", r.median_ms / rows[i - 1].median_ms);
        std::printf("\n");
    }
    for (const Row &r : rows)
        std::printf("%s\n", hetpu::json_line({{"bench", "plbhac_solve_speed"},
                                              {"pus", r.pus},
                                              {"solver", r.solver},
                                              {"reps", reps},
                                              {"median_ms", r.median_ms},
                                              {"min_ms", r.min_ms},
                                              {"max_ms", r.max_ms},
                                              {"ipopt_iterations", r.iterations},
                                              {"nlp_solves", r.solves}})
                                .c_str());
    return 0;
}
