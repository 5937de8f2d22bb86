// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_options.h"

#include <optional>
#include <string>

#include "common/settings.h"

namespace hetpu {

void plbhac_options_from_env(PlbhacOptions &opt, const std::function<const char *(const char *)> &lookup)
{
    // Parsed into a copy: on an error `opt` is left as it was, not half updated. Ranges and
    // messages are the settings module's (common/settings.cpp).
    PlbhacOptions o = opt;
    const Settings settings(lookup);
    try {
        o.step_error = settings.number("HETPU_PLBHAC_STEP_ERROR").value_or(o.step_error);
        o.min_steps = static_cast<unsigned>(settings.whole("HETPU_PLBHAC_MIN_STEPS").value_or(o.min_steps));
        if (const std::optional<double> ms = settings.number("HETPU_PLBHAC_MIN_STEP_MS"))
            o.min_step_s = *ms * 1e-3;
        o.warm_steps = static_cast<unsigned>(settings.whole("HETPU_PLBHAC_WARM_STEPS").value_or(o.warm_steps));
        o.trust = settings.number("HETPU_PLBHAC_TRUST").value_or(o.trust);
        if (const std::optional<double> ms = settings.number("HETPU_PLBHAC_GAP_MS"))
            o.gap_threshold_s = *ms * 1e-3;
        o.tail_fraction = settings.number("HETPU_PLBHAC_TAIL").value_or(o.tail_fraction);
        o.alpha = settings.number("HETPU_PLBHAC_ALPHA").value_or(o.alpha);
        o.steps = static_cast<unsigned>(settings.whole("HETPU_PLBHAC_STEPS").value_or(o.steps));
        o.x_init = settings.whole("HETPU_PLBHAC_XINIT").value_or(o.x_init);
        o.align_finish = settings.flag_or("HETPU_PLBHAC_ALIGN", o.align_finish);
        o.hedge_straggle = settings.flag_or("HETPU_PLBHAC_HEDGE", o.hedge_straggle);
        if (const std::optional<std::string> solver = settings.choice("HETPU_PLBHAC_SOLVER"))
            o.solver = *solver == "ipopt" ? PlbhacSolver::Ipopt : PlbhacSolver::Auto;
    } catch (const SettingError &e) {
        throw PlbhacInputError(e.what());
    }
    opt = o;
}

}  // namespace hetpu
