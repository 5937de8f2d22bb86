// SPDX-License-Identifier: LGPL-2.1-or-later
// How late a PU's last block may end, and what that costs a plan: the pieces of PLB-HAC's
// straggle hedge (PlbhacPlanner's final solve).
//
// A job ends when the last of its final blocks ends. A plan that predicts every PU to end
// at the same time is optimal for exact predictions; with noisy PUs the job waits for the
// unluckiest of them, and a plan that gives many noisy PUs one block each pays their
// largest miss (seen on a node of 15 CPU workers with ~20% timing scatter beside a steady
// GPU: the CPUs' 8% of the work, one block each, ended the job 30% after the GPU). Such a
// PU's share is worth less than its straggle: giving it less, and a steadier PU more, can
// end the job earlier on average although it is predicted to end it later.
//
// Pure C++, no StarPU.
#pragma once

#include <cstdint>
#include <vector>

namespace hetpu {

// Fewest out-of-sample misses a robust spread is read from.
constexpr std::size_t kPlbhacMinMisses = 5;

// A spread of log(measured / predicted): 1.4826 x the median absolute deviation around
// the median, the standard deviation for a normal law, which one spike or one change of
// speed among many misses does not move. From 2 to kPlbhacMinMisses - 1 finite samples,
// the largest |log miss| (about one standard deviation for so few); 0 (unknown) for fewer
// than 2. Non-finite samples are skipped.
double plbhac_miss_spread(const std::vector<double> &log_misses);

// Draws of the PUs' misses, made once and shared by every plan compared (common random
// numbers: the plans see the same luck, so their difference is not noise, and a run is
// repeatable). PU i's block, predicted to take d seconds from ready_s, ends at
// ready_s + d x exp(spread_i Z - spread_i^2 / 2) in each draw, Z standard normal and
// independent per PU and draw: a log-normal miss of mean 1 (right on average). The normal
// draws are made once; new spreads only rescale them (set_spreads), so a planner whose
// spreads move with every block does not draw again.
class PlbhacStraggleDraws {
public:
    // Standard normal draws for as many PUs as `spreads` has, from a generator seeded with
    // `seed`, scaled by `spreads` (set_spreads).
    explicit PlbhacStraggleDraws(const std::vector<double> &spreads, unsigned draws = 256, std::uint64_t seed = 1);

    // Per PU (plbhac_miss_spread), >= 0 (anything else counts as 0). Throws
    // std::invalid_argument when the count differs from the PUs'.
    void set_spreads(const std::vector<double> &spreads);
    const std::vector<double> &spreads() const { return spreads_; }

    // The mean over the draws of the latest end among the PUs' blocks: ready_s and
    // duration_s per PU, in the order of the spreads; a duration of 0 is no block (the PU
    // ends nothing). 0 when no PU has a block. Throws std::invalid_argument when the
    // sizes differ from the PUs'.
    double expected_end(const std::vector<double> &ready_s, const std::vector<double> &duration_s) const;

private:
    std::size_t pus_ = 0;
    std::vector<double> z_;     // draw-major: z_[d * pus_ + i], standard normal
    std::vector<double> miss_;  // the same layout: exp(spread_i z - spread_i^2 / 2)
    std::vector<double> spreads_;
};

}  // namespace hetpu
