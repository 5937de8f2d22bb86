// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_options.h"

#include <cmath>
#include <optional>
#include <string>

#include "common/finite_number.h"

namespace hetpu {

namespace {

bool parse_double(const char *text, double lo, double hi, double &out)
{
    if (!text || !*text)
        return true;
    const std::optional<double> v = finite_number(text);
    if (!v || *v < lo || *v > hi)
        return false;
    out = *v;
    return true;
}

}  // namespace

void plbhac_options_from_env(PlbhacOptions &opt, const std::function<const char *(const char *)> &lookup)
{
    // Parsed into a copy: on an error `opt` is left as it was, not half updated.
    PlbhacOptions o = opt;
    double gap_ms = o.gap_threshold_s * 1e3, steps = o.steps, x_init = static_cast<double>(o.x_init);
    double align = o.align_finish ? 1 : 0, hedge = o.hedge_straggle ? 1 : 0;
    double min_step_ms = o.min_step_s * 1e3;
    if (!parse_double(lookup("HETPU_PLBHAC_STEP_ERROR"), 0, 1e3, o.step_error))
        throw PlbhacInputError("HETPU_PLBHAC_STEP_ERROR must be a fraction >= 0 (e.g. 0.1; 0: off)");
    double min_steps = o.min_steps;
    if (!parse_double(lookup("HETPU_PLBHAC_MIN_STEPS"), 1, 1e6, min_steps) || min_steps != std::floor(min_steps))
        throw PlbhacInputError("HETPU_PLBHAC_MIN_STEPS must be a whole number of virtual steps >= 1 (e.g. 4)");
    o.min_steps = static_cast<unsigned>(min_steps);
    if (!parse_double(lookup("HETPU_PLBHAC_MIN_STEP_MS"), 0, 1e9, min_step_ms))
        throw PlbhacInputError("HETPU_PLBHAC_MIN_STEP_MS must be a number of milliseconds >= 0 (e.g. 200)");
    o.min_step_s = min_step_ms * 1e-3;
    double warm_steps = o.warm_steps;
    if (!parse_double(lookup("HETPU_PLBHAC_WARM_STEPS"), 1, 1e6, warm_steps) || warm_steps != std::floor(warm_steps))
        throw PlbhacInputError("HETPU_PLBHAC_WARM_STEPS must be a whole number of virtual steps >= 1 (e.g. 4)");
    o.warm_steps = static_cast<unsigned>(warm_steps);
    if (!parse_double(lookup("HETPU_PLBHAC_TRUST"), 0, 1e9, o.trust) || (o.trust > 0 && o.trust < 1))
        throw PlbhacInputError(
            "HETPU_PLBHAC_TRUST must be 0 (no cap) or a factor >= 1 over a PU's largest measured block (e.g. 4)");
    if (!parse_double(lookup("HETPU_PLBHAC_GAP_MS"), 0, 1e9, gap_ms))
        throw PlbhacInputError("HETPU_PLBHAC_GAP_MS must be a number of milliseconds >= 0 (e.g. 400)");
    if (!parse_double(lookup("HETPU_PLBHAC_TAIL"), 0, 1, o.tail_fraction))
        throw PlbhacInputError("HETPU_PLBHAC_TAIL must be a fraction of the data in [0, 1] (e.g. 0.7)");
    if (!parse_double(lookup("HETPU_PLBHAC_ALPHA"), 0, 0.99, o.alpha))
        throw PlbhacInputError("HETPU_PLBHAC_ALPHA must be a shrink factor in [0, 0.99] (e.g. 0.1)");
    if (!parse_double(lookup("HETPU_PLBHAC_STEPS"), 1, 1e6, steps) || steps != std::floor(steps))
        throw PlbhacInputError("HETPU_PLBHAC_STEPS must be a whole number of virtual steps >= 1 (e.g. 8)");
    if (!parse_double(lookup("HETPU_PLBHAC_XINIT"), 0, 1e18, x_init) || x_init != std::floor(x_init))
        throw PlbhacInputError("HETPU_PLBHAC_XINIT must be a whole number of elements (e.g. 1024)");
    if (!parse_double(lookup("HETPU_PLBHAC_ALIGN"), 0, 1, align) || (align != 0 && align != 1))
        throw PlbhacInputError(
            "HETPU_PLBHAC_ALIGN must be 1 (equalise absolute finish times, default) or 0 (equal block durations)");
    o.align_finish = align == 1;
    if (!parse_double(lookup("HETPU_PLBHAC_HEDGE"), 0, 1, hedge) || (hedge != 0 && hedge != 1))
        throw PlbhacInputError("HETPU_PLBHAC_HEDGE must be 1 (the final shares weigh each PU kind's measured "
                               "straggle, default) or 0 (the final shares end together as predicted)");
    o.hedge_straggle = hedge == 1;
    if (const char *solver = lookup("HETPU_PLBHAC_SOLVER"); solver && *solver) {
        if (std::string(solver) == "auto")
            o.solver = PlbhacSolver::Auto;
        else if (std::string(solver) == "ipopt")
            o.solver = PlbhacSolver::Ipopt;
        else
            throw PlbhacInputError(std::string("HETPU_PLBHAC_SOLVER must be auto (the equal-finish search where every "
                                               "curve increases, Ipopt elsewhere; default) or ipopt (Ipopt for every "
                                               "solve, as the paper), not '") +
                                   solver + "'");
    }
    o.gap_threshold_s = gap_ms * 1e-3;
    o.steps = static_cast<unsigned>(steps);
    o.x_init = static_cast<uint64_t>(x_init);
    opt = o;
}

}  // namespace hetpu
