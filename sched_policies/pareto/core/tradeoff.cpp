// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/tradeoff.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "sched_policies/pareto/core/front_metrics.h"
#include "common/finite_number.h"

namespace hetpu {

Tradeoff parse_tradeoff(const std::string &text)
{
    const std::string help = "use time, energy or slowdown<=X% (e.g. slowdown<=5%)";
    if (text == "time")
        return {Tradeoff::Time, 0};
    if (text == "energy")
        return {Tradeoff::Energy, 0};
    const std::string prefix = "slowdown<=";
    if (text.compare(0, prefix.size(), prefix) == 0 && text.size() > prefix.size() + 1 && text.back() == '%') {
        const std::string num = text.substr(prefix.size(), text.size() - prefix.size() - 1);
        const std::optional<double> v = finite_number(num);
        if (v && *v >= 0)
            return {Tradeoff::Slowdown, *v / 100.0};
    }
    throw std::invalid_argument("unknown trade-off '" + text + "': " + help);
}

std::string tradeoff_name(const Tradeoff &t)
{
    switch (t.kind) {
    case Tradeoff::Time: return "time";
    case Tradeoff::Energy: return "energy";
    default: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "slowdown<=%g%%", t.slowdown * 100.0);
        return buf;
    }
    }
}

std::size_t pick_tradeoff(const std::vector<Distribution> &front, EnergyObjective objective, const Tradeoff &t)
{
    if (front.empty())
        throw std::invalid_argument("pick_tradeoff: empty front");
    switch (t.kind) {
    case Tradeoff::Energy: return 0;
    case Tradeoff::Time: return front.size() - 1;
    default: break;
    }
    const double limit = front.back().time_s * (1.0 + t.slowdown);
    std::size_t best = front.size() - 1;
    for (std::size_t i = front.size(); i-- > 0;)
        if (front[i].time_s <= limit && energy_of(front[i], objective) < energy_of(front[best], objective))
            best = i;
    return best;
}

}  // namespace hetpu
