// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_warm_start.h"

#include <cmath>

namespace hetpu {

// A PU the memory does not know (another worker set) means training again, as the training
// ratio R only makes sense for all PUs together.
void plbhac_warm_start(PlbhacState &s)
{
    if (!s.options.memory)
        return;
    std::vector<const PlbhacPuMemory *> found;
    for (const auto &pu : s.pus) {
        const PlbhacPuMemory *m = nullptr;
        for (const PlbhacPuMemory &c : s.options.memory->pus)
            if (c.worker == pu->info.id && c.exec.size() > 0)
                m = &c;
        if (!m)
            return;
        found.push_back(m);
    }
    for (size_t i = 0; i < s.pus.size(); ++i) {
        PlbhacPuState &pu = *s.pus[i];
        pu.exec = found[i]->exec;
        pu.transfer = found[i]->transfer;
        pu.size_lo = found[i]->size_lo;
        pu.size_hi = found[i]->size_hi;
        pu.note_fit_range();
        for (double v : found[i]->latency)
            if (std::isfinite(v) && v >= 0)
                pu.note_latency(v);
        for (double v : found[i]->home)
            if (std::isfinite(v) && v >= 0)
                pu.note_home_delay(v);
        for (double m : found[i]->misses)
            if (std::isfinite(m))
                pu.note_miss(m);
        // The blocks behind the saved model (its window), each priced with its transfer and
        // latency as the models give them: the fixed cost per block (plbhac_fixed_cost) is
        // read off them from the first solve on, instead of after three blocks of this run,
        // which a short job with few steps only has near its end. Kept apart from this run's
        // measurements: saved under another load, they must not hold a PU at an efficient
        // size.
        for (const auto &[x, t] : pu.exec.points())
            pu.saved_blocks.emplace_back(x, t + pu.transfer.predict(x) + pu.latency_s);
    }
    s.trained = true;
    s.warm_started = true;
}

// A job may end during its training (a GPU can finish the whole job while the CPUs run
// their first block), and then the next job would train again, forever. What every PU
// measured is enough to start from: a PU measured at one size is priced in proportion to
// it (plbhac_narrow), and the blocks the solve gives it add sizes. A PU that measured
// nothing gives nothing to start from, and must not erase what an earlier job left.
bool plbhac_learnt(const PlbhacState &s, PlbhacMemory &m)
{
    bool measured_all = true;
    for (const auto &pu : s.pus)
        measured_all &= pu->exec.size() > 0;
    if (!(s.trained || measured_all))
        return false;
    for (const auto &pu : s.pus)
        m.pus.push_back({pu->info.id, pu->exec, pu->transfer, pu->size_lo, pu->size_hi, pu->latencies, pu->home_delays,
                         pu->misses});
    return true;
}

}  // namespace hetpu
