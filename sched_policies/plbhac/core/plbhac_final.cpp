// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_final.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "sched_policies/plbhac/core/plbhac_execution.h"
#include "sched_policies/plbhac/core/plbhac_step_solve.h"
#include "sched_policies/plbhac/core/plbhac_straggle.h"

namespace hetpu {

namespace {

constexpr unsigned kStraggleDraws = 128;   // draws of the PUs' misses a plan's expected end is read from
constexpr double kStraggleWorth = 0.01;    // see plbhac_hedge_final
constexpr double kStraggleContrast = 1.5;  // see plbhac_hedge_final

}  // namespace

// Each PU takes its share exactly once: a PU a step behind reaches the final solution from
// an earlier step, and taking its share again there would be taking someone else's. A PU
// asking again gets only what no untaken share reserves (a share cut by a failed solve).
uint64_t plbhac_final_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining)
{
    const size_t i = pu.index;
    uint64_t size = 0;
    if (!pu.final_taken) {
        pu.final_taken = true;
        s.reserved_known = false;
        size = std::min(s.solution[i], remaining);
    } else {
        const uint64_t reserved = plbhac_reserved_for_final(s);
        size = remaining > reserved ? remaining - reserved : 0;
    }
    if (size == 0)
        return 0;
    pu.step = s.solved_step;
    const bool tail = s.tail_start_step != 0;
    return plbhac_hand_out(s, pu, size, {0, 0, tail ? "tail" : "execution", s.solved_step});
}

void plbhac_resolve_final(PlbhacState &s, uint64_t remaining)
{
    s.force_final = true;
    plbhac_solve_step(s, s.solved_step + 1, remaining);
    if (s.final_solved)
        for (auto &p : s.pus)
            p->final_taken = false;
    s.reserved_known = false;
}

// Cached: every idle PU that has taken its final share asks for more after each completion,
// and a sum over the PUs each time would make the final step quadratic in them.
uint64_t plbhac_reserved_for_final(const PlbhacState &s)
{
    if (!s.reserved_known) {
        s.reserved = 0;
        for (size_t j = 0; j < s.pus.size(); ++j)
            s.reserved += s.pus[j]->share_left + (s.pus[j]->final_taken ? 0 : s.solution[j]);
        s.reserved_known = true;
    }
    return s.reserved;
}

std::vector<double> plbhac_hedge_scales(double k, const std::vector<double> &spreads)
{
    std::vector<double> scales;
    for (double spread : spreads)
        scales.push_back(1.0 + k * spread);
    return scales;
}

// Per kind, because the final shares are one block per PU, so a PU's own misses are too
// few (a warm run of a short job has none of this run yet; the memory carries them), and
// units of one kind on one node share their sources of scatter (cores sharing caches and
// memory bandwidth, one driver).
std::vector<double> plbhac_straggle_spreads(const PlbhacState &s)
{
    std::map<WorkerKind, std::vector<double>> pools;
    for (const auto &pu : s.pus)
        pools[pu->info.kind].insert(pools[pu->info.kind].end(), pu->misses.begin(), pu->misses.end());
    std::map<WorkerKind, double> spread;
    for (const auto &[kind, misses] : pools)
        spread[kind] = plbhac_miss_spread(misses);
    std::vector<double> spreads;
    for (const auto &pu : s.pus)
        spreads.push_back(spread[pu->info.kind]);
    return spreads;
}

// The candidates price each PU's block 1 + k x its kind's spread longer, k from 0 (the plan
// as solved) to 8, and are judged by their expected end under the PUs' misses
// (plbhac_straggle.h: log-normal misses of the measured spreads, the same draws for every
// plan); a plan must gain 0.1% to replace the one as solved. The k chosen (0 included) is
// kept for the job's later final solves, which then solve once with it instead of
// searching again. Only between kinds whose spreads are known and differ by
// kStraggleContrast or more: the hedge moves work from the noisier kind to the steadier
// one, and with an unknown or a like spread there is nothing to move it by.
PlbhacSolution plbhac_hedge_final(PlbhacState &s, PlbhacSolution plan, const std::vector<PlbhacPu> &input,
                                  const std::vector<double> &caps, const PlbhacSolveOptions &opt)
{
    const std::vector<double> spreads = plbhac_straggle_spreads(s);
    const auto [least, most] = std::minmax_element(spreads.begin(), spreads.end());
    if (*least <= 0 || *most < kStraggleContrast * *least || plan.blocks.size() != s.pus.size())
        return plan;
    const std::int64_t w = std::accumulate(plan.blocks.begin(), plan.blocks.end(), std::int64_t{0});
    std::vector<double> ready;
    for (const PlbhacPu &p : input)
        ready.push_back(p.ready_s);
    const auto durations = [&ready](const PlbhacSolution &sol, const std::vector<double> &scale) {
        std::vector<double> d(ready.size(), 0.0);
        for (size_t i = 0; i < d.size(); ++i)
            if (sol.blocks[i] > 0)
                d[i] = std::max(0.0, sol.finish_s[i] - ready[i]) / scale[i];
        return d;
    };
    if (!s.straggle_draws)
        s.straggle_draws = std::make_unique<PlbhacStraggleDraws>(spreads, kStraggleDraws);
    // Rescaled for a spread that moved by 2% or more: a new miss moves a kind's spread by
    // less, and each rescaling costs an exponential per PU and draw.
    for (size_t i = 0; i < spreads.size(); ++i)
        if (std::abs(spreads[i] - s.straggle_draws->spreads()[i]) > 0.02 * spreads[i]) {
            s.straggle_draws->set_spreads(spreads);
            break;
        }
    const PlbhacStraggleDraws &draws = *s.straggle_draws;
    const std::vector<double> predicted = durations(plan, std::vector<double>(s.pus.size(), 1.0));
    double best_end = draws.expected_end(ready, predicted);
    double predicted_end = 0;
    for (size_t i = 0; i < ready.size(); ++i)
        if (predicted[i] > 0)
            predicted_end = std::max(predicted_end, ready[i] + predicted[i]);
    // The hedge can win back at most the plan's straggle (its expected end beyond its
    // predicted one). Under kStraggleWorth of the plan's end, or under twice what the last
    // hedge's solves took, it is not worth the solves: a short job re-shares its final step
    // often, and each hedge costs several solves.
    const double straggle = best_end - predicted_end;
    if (straggle <= predicted_end * kStraggleWorth || straggle <= 2.0 * s.last_hedge_s)
        return plan;
    const auto started = std::chrono::steady_clock::now();
    // The candidates' curves are the plan's scaled: increasing where the plan's were, so the
    // equal-finish search answers them without sampling each curve again.
    PlbhacSolveOptions candidate_opt = opt;
    candidate_opt.equal_finish_from_pus = 1;
    double solve_s = plan.solve_time_s;
    PlbhacSolution best = std::move(plan);
    bool changed = false;
    s.hedge_k = 0;
    for (double k : {0.5, 1.0, 2.0, 4.0, 8.0}) {
        const std::vector<double> scale = plbhac_hedge_scales(k, spreads);
        std::vector<std::unique_ptr<TimeCurve>> curves;
        const std::vector<PlbhacPu> hedged = plbhac_solver_input(s, true, caps, curves, &scale);
        PlbhacSolution candidate;
        try {
            candidate = plbhac_solve(hedged, w, candidate_opt);
        } catch (const std::exception &) {
            continue;  // the plans solved so far stand
        }
        solve_s += candidate.solve_time_s;
        const double end = draws.expected_end(ready, durations(candidate, scale));
        if (end < best_end * (1.0 - 1e-3)) {
            best_end = end;
            best = std::move(candidate);
            changed = true;
            s.hedge_k = k;
        }
    }
    s.last_hedge_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    s.hedged_solves += changed ? 1 : 0;
    best.solve_time_s = solve_s;
    return best;
}

}  // namespace hetpu
