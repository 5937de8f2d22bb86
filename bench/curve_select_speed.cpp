// SPDX-License-Identifier: LGPL-2.1-or-later
// Cost and quality of choosing a PU's time curve (select_curve), the part of PLB-HAC's
// planning that a block's completion callback pays most often, with the default screen
// (SelectOptions::screen_iterations solves per candidate before the best few are fitted
// robustly) against a converged screen, in the same run.
//
// Histories are drawn as PLB-HAC makes them (deterministic): block sizes doubling from a
// training size, then growing ~10% per block, in the forgetting window of OnlineTimeModel,
// from five true shapes (proportional, a fixed cost per block, an occupancy ramp, convex,
// flat), 1-20% Gaussian timing noise and 10% spikes of 3x. For each history both screens
// choose `reps` times, interleaved; reported per history length: the median time of a
// choice with each and their ratio, how many histories chose another subset, and each
// screen's mean |ln(predicted / true)| inside the measured sizes and at 4x the largest
// (the extrapolation a step's trust region allows): a cheaper screen must not choose worse
// curves. A table, then JSON lines.
// Usage: curve_select_speed [histories per length] [reps] [--screen N]   (default 80, 5
// and the library's screen_iterations)
#include "perfmodels/core/curve_select.h"
#include "perfmodels/core/fitted_curve.h"
#include "perfmodels/core/observation_log.h"
#include "common/json_line.h"
#include "common/cli_args.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <vector>

namespace {

using Truth = std::function<double(double)>;

Truth shape(int k)
{
    switch (k % 5) {
    case 0: return [](double x) { return 2e-7 * x; };
    case 1: return [](double x) { return 1e-3 + 1e-7 * x; };
    case 2: return [](double x) { return 5e-8 * x * (1 + 3 * 16384 / (x + 16384)); };
    case 3: return [](double x) { return 1e-7 * x + 1e-13 * x * x; };
    default: return [](double) { return 5e-3; };
    }
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

hetpu::FittedCurve curve_of(const hetpu::SubsetFit &f, const hetpu::ObservationLog &log)
{
    return hetpu::FittedCurve(f.terms, f.coef, log.max_x(), log.min_x(), log.max_x(), 1e-3 * log.min_time());
}

// Mean |ln(predicted / true)| at 16 log-spaced sizes over the measured range, and at 4x
// the largest measured size.
std::pair<double, double> errors(const hetpu::FittedCurve &c, const Truth &truth, double lo, double hi)
{
    double in = 0;
    for (int i = 0; i < 16; ++i) {
        const double x = lo * std::pow(hi / lo, i / 15.0);
        in += std::fabs(std::log(std::max(c.value(x), 1e-300) / truth(x)));
    }
    const double x4 = 4 * hi;
    return {in / 16, std::fabs(std::log(std::max(c.value(x4), 1e-300) / truth(x4)))};
}

struct Row {
    int points = 0, histories = 0, differ = 0;
    double screen_ms = 0, converged_ms = 0;
    double screen_err_in = 0, converged_err_in = 0, screen_err_4x = 0, converged_err_4x = 0;
};

Row measure(int points, int histories, int reps, int screen_iterations, std::mt19937 &rng)
{
    hetpu::SelectOptions screen;
    screen.screen_iterations = screen_iterations;
    hetpu::SelectOptions converged = screen;
    converged.screen_iterations = converged.fit.max_iterations;
    std::uniform_real_distribution<double> uniform(0, 1);
    const double noises[] = {0.01, 0.05, 0.1, 0.2};
    Row row;
    row.points = points;
    row.histories = histories;
    std::vector<double> t_screen, t_converged;
    for (int h = 0; h < histories; ++h) {
        const Truth truth = shape(h);
        std::normal_distribution<double> noise(0, noises[(h / 5) % 4]);
        hetpu::ObservationLog log(4.0, 24);
        double x = 1024 * (1 + std::floor(uniform(rng) * 4));
        for (int i = 0; i < points; ++i) {
            double t = truth(x) * std::max(0.05, 1 + noise(rng));
            if (uniform(rng) < 0.1)
                t *= 3;
            log.add(x, t);
            x *= i < 5 ? 2.0 : 1.1;
        }
        const hetpu::FitData data = log.fit_data(true);
        hetpu::SubsetFit a, b;
        for (int r = 0; r < reps; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            a = hetpu::select_curve(data, screen);
            auto t1 = std::chrono::steady_clock::now();
            b = hetpu::select_curve(data, converged);
            auto t2 = std::chrono::steady_clock::now();
            t_screen.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            t_converged.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        }
        row.differ += a.terms != b.terms;
        const auto ea = errors(curve_of(a, log), truth, log.min_x(), log.max_x());
        const auto eb = errors(curve_of(b, log), truth, log.min_x(), log.max_x());
        row.screen_err_in += ea.first / histories;
        row.screen_err_4x += ea.second / histories;
        row.converged_err_in += eb.first / histories;
        row.converged_err_4x += eb.second / histories;
    }
    row.screen_ms = median(t_screen);
    row.converged_ms = median(t_converged);
    return row;
}

}  // namespace

int main(int argc, char **argv)
{
    int histories = 80, reps = 5, screen_iterations = hetpu::SelectOptions().screen_iterations;
    CLI::App app{"Time and quality of a PU's curve choice: the default screen against a converged one.",
                 "curve_select_speed"};
    app.add_option("histories", histories, "histories per length")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("reps", reps, "timed choices per history and screen")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--screen", screen_iterations,
                   "solves per candidate in the screen measured (default: the library's)")
        ->capture_default_str()
        ->check(CLI::Range(1, 40));
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    std::mt19937 rng(2026);
    std::vector<Row> rows;
    for (int points : {4, 6, 10, 16, 24}) {
        rows.push_back(measure(points, histories, reps, screen_iterations, rng));
        std::fprintf(stderr, "[%zu/5 history lengths]\n", rows.size());
    }
    std::printf("screen: %d solves per candidate vs converged; |ln error| of the chosen curve against "
                "the true one, inside the measured sizes and at 4x the largest\n",
                screen_iterations);
    std::printf("points histories  screen_ms converged_ms  ratio  differ  err_in(screen/conv)  err_4x(screen/conv)\n");
    for (const Row &r : rows)
        std::printf("%6d %9d %10.3f %12.3f %6.3f %7d %9.4f / %-8.4f %9.4f / %-8.4f\n", r.points, r.histories,
                    r.screen_ms, r.converged_ms, r.screen_ms / r.converged_ms, r.differ, r.screen_err_in,
                    r.converged_err_in, r.screen_err_4x, r.converged_err_4x);
    for (const Row &r : rows)
        std::printf("%s\n", hetpu::json_line({{"bench", "curve_select_speed"},
                                              {"points", r.points},
                                              {"histories", r.histories},
                                              {"screen_iterations", screen_iterations},
                                              {"screen_ms", r.screen_ms},
                                              {"converged_ms", r.converged_ms},
                                              {"ratio", r.screen_ms / r.converged_ms},
                                              {"differ", r.differ},
                                              {"screen_err_in", r.screen_err_in},
                                              {"converged_err_in", r.converged_err_in},
                                              {"screen_err_4x", r.screen_err_4x},
                                              {"converged_err_4x", r.converged_err_4x}})
                                .c_str());
    return 0;
}
