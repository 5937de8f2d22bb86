// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_training.h"

#include <algorithm>
#include <vector>

namespace hetpu {

// 1/32 of the job per PU keeps training (about 3 x_init per PU) around a tenth of the job,
// while blocks stay large enough that a device's fixed per-call latency does not swamp the
// measured slope.
uint64_t plbhac_x_init(const BlockRules &rules, const PlbhacOptions &options, size_t pus)
{
    const uint64_t n = std::max<uint64_t>(1, pus);
    uint64_t x = options.x_init ? options.x_init : rules.total / (32 * n);
    return std::max(x / rules.granule * rules.granule, rules.min_block);
}

namespace {

// The one synchronisation: every PU has measured its two training blocks or declined them.
void note_if_trained(PlbhacState &s)
{
    for (const auto &p : s.pus)
        if (p->training_done < 2 && !p->declined)
            return;
    s.trained = true;
    s.training_end_s = s.now_s;
}

}  // namespace

uint64_t plbhac_training_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining)
{
    if (pu.training_assigned == 0) {
        pu.training_assigned = 1;
        pu.outstanding.push_back({s.x_init, 0, "training", 0});
        return s.x_init;
    }
    if (pu.training_assigned == 1 && pu.training_done == 1) {
        // Not trained further while it cannot help: the job (short, or nearly done) ends
        // sooner without it. It is asked again at every completion, and trains as usual if
        // the end moves away (the PUs it counted on slow down).
        pu.declined = plbhac_cannot_help(s, pu, remaining);
        if (pu.declined) {
            note_if_trained(s);
            return 0;
        }
        // The fastest PU gets 2 x_init; the others 2 x_init R, R = t_fastest / t_p, so the
        // second training blocks end close together (docs/design.md, PLB-HAC training block
        // (erratum)).
        double r = pu.info.id == s.first_finisher ? 1.0 : s.first_finish_s / std::max(pu.first_training_s, 1e-12);
        // An accelerator never gets less than x_init / 2: dominated by a fixed launch
        // latency on tiny blocks, a smaller second point would measure only the latency and
        // the first fit would get its slope wrong. Nor a size within plbhac_too_close of
        // x_init: two such sizes show no slope, its model stays proportional through them
        // (plbhac_narrow) and prices an accelerator whose blocks are mostly a launch cost as
        // slow as on them. It gets 2 x_init, the fastest PU's size, instead: at most 4/3 of
        // its first block's time longer. CPUs follow the paper exactly.
        uint64_t size = s.round_block(static_cast<uint64_t>(2.0 * s.x_init * std::min(r, 1.0)));
        if (pu.info.kind != WorkerKind::Cpu) {
            size = std::max(size, s.round_block(s.x_init / 2));
            if (plbhac_too_close(static_cast<double>(size), static_cast<double>(s.x_init)))
                size = s.round_block(2 * s.x_init);
        }
        size = std::max(size, pu.min_block);
        pu.training_assigned = 2;
        pu.training_sizes[1] = size;
        pu.outstanding.push_back({size, 0, "training", 0});
        return size;
    }
    if (pu.training_done >= 2) {
        // Finished its training, waiting for the slower PUs (the one synchronisation).
        // Rather than idle, it keeps taking blocks (the paper credits PLB-HAC with no
        // idleness in the initial phase), each twice the last: repeating the second size
        // would leave a fast accelerator with two close sizes where its launch cost
        // dominates, and doubled blocks show the first solve sizes close to the ones it will
        // choose. The overshoot past the synchronisation stays below the time already spent
        // waiting, and the final solve counts every PU's queue. Capped at a quarter of the
        // least share of the job the measurements allow it (plbhac_least_share) or of an
        // even share of what is left, whichever is larger: no PU takes much before the
        // models exist, while an accelerator waiting for many slow PUs is not kept at blocks
        // that are all launch cost. The even share is of what is left, not of the job: a
        // slow PU's quarter of the job's can outlast the whole job at the optimum.
        const double elements = std::max(static_cast<double>(remaining) / static_cast<double>(s.pus.size()),
                                         plbhac_least_share(s, pu) * static_cast<double>(s.rules.total));
        const uint64_t cap = std::max(pu.training_sizes[1], s.round_block(static_cast<uint64_t>(elements / 4)));
        uint64_t size = std::min(2 * std::max(pu.waiting_size, pu.training_sizes[1]), cap);
        // Nor past the end of the job, when the job is short enough to end before the
        // synchronisation: a slow PU's doubled blocks would otherwise run on after every
        // other PU has finished. The end is over-estimated, as if the PUs without a
        // measured block did nothing: the cap must not hold a PU whose share is large.
        if (plbhac_cannot_help(s, pu, remaining))
            return 0;  // asked again at every completion
        const double end = plbhac_measured_end_s(s, remaining);
        if (end > 0) {
            const double rate = plbhac_best_rate(pu);
            const uint64_t within =
                s.round_block(static_cast<uint64_t>(std::max(0.0, rate * (end - plbhac_free_in(pu, rate, s.now_s)))));
            size = std::min(size, std::max(within, pu.min_block));
            if (within < pu.min_block && !pu.outstanding.empty())
                return 0;  // its next completion asks again, with what is left then
        }
        pu.waiting_size = size;
        pu.outstanding.push_back({size, 0, "training", 0});
        return size;
    }
    return 0;  // its training block is still running
}

void plbhac_training_done(PlbhacState &s, PlbhacPuState &pu, int worker, double measured)
{
    if (++pu.training_done == 1) {
        pu.first_training_s = measured;
        if (s.first_finisher < 0) {
            s.first_finisher = worker;
            s.first_finish_s = measured;
        }
    }
    note_if_trained(s);
}

// A PU still on its first block has run for at most the time since the job started (its
// block was handed out at the start), so it does at most x_init in half of that (margin for
// a late start). A PU measured on training sizes only may be faster on larger blocks (an
// accelerator's launch cost): 4x for those.
double plbhac_least_share(const PlbhacState &s, const PlbhacPuState &pu)
{
    const double mine = plbhac_best_rate(pu);
    if (mine <= 0 || s.now_s <= 0)
        return 0;
    double all = mine;
    for (const auto &p : s.pus) {
        if (p.get() == &pu)
            continue;
        const double r = plbhac_best_rate(*p);
        if (r <= 0)
            all += static_cast<double>(s.x_init) / (0.5 * s.now_s);
        else
            all += p->info.kind == WorkerKind::Cpu ? r : 4 * r;
    }
    return mine / all;
}

double plbhac_measured_end_s(const PlbhacState &s, uint64_t remaining, const PlbhacPuState *without)
{
    std::vector<std::pair<double, double>> free_rate;
    for (const auto &p : s.pus)
        if (const double rate = plbhac_best_rate(*p); rate > 0 && p.get() != without && !p->declined)
            free_rate.emplace_back(plbhac_free_in(*p, rate, s.now_s), rate);
    if (free_rate.empty())
        return 0;
    return plbhac_water_filled_end(std::move(free_rate), static_cast<double>(remaining));
}

bool plbhac_cannot_help(const PlbhacState &s, const PlbhacPuState &pu, uint64_t remaining)
{
    if (pu.training_done < 1 || pu.first_training_s <= 0 || s.x_init == 0 || remaining == 0)
        return false;
    const double end = plbhac_measured_end_s(s, remaining, &pu);
    if (end <= 0)
        return false;  // nobody else measured yet: nothing to compare with
    const double rate = plbhac_best_rate(pu);
    if (rate <= 0)
        return false;
    // Training is worth it only if it leaves time to use what it taught: the second
    // training block and at least one block after it must both end before the others would
    // have finished everything.
    const uint64_t smallest = std::max(pu.min_block, s.rules.granule);
    const double block_s = static_cast<double>(smallest) / rate;
    return 2 * block_s >= end;
}

}  // namespace hetpu
