// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_codelet_start.h"

#include <algorithm>
#include <cmath>

namespace hetpu {

bool plbhac_memory_from_codelet_model(const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                      PlbhacMemory &memory)
{
    if (!rules.codelet_expected_s || workers.empty())
        return false;
    std::vector<uint64_t> sizes;
    for (uint64_t x : rules.calibrated_sizes)
        if (x > 0 && x <= rules.total)
            sizes.push_back(x);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    PlbhacMemory found;
    for (const PlannerWorker &w : workers) {
        PlbhacPuMemory m;
        m.worker = w.id;
        for (uint64_t x : sizes) {
            const double s = rules.codelet_expected_s(w.id, x);
            if (!(std::isfinite(s) && s > 0))
                continue;
            const double size = static_cast<double>(x);
            m.exec.add(size, s);
            m.size_lo = m.exec.size() == 1 ? size : std::min(m.size_lo, size);
            m.size_hi = std::max(m.size_hi, size);
        }
        if (m.exec.size() == 0)
            return false;
        found.pus.push_back(std::move(m));
    }
    memory = std::move(found);
    return true;
}

}  // namespace hetpu
