// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's model evaluation ("solveEquationSystem"): from each PU's fitted time
// curves, the block sizes of the next virtual step, so that all PUs that get work are
// predicted to finish at the same time.
//
// Steps (each documented where it is implemented):
//   1. continuous solve of system (3) as a min-makespan NLP: by the equal-finish search
//      when every PU's curve increases (exact there, and microseconds), else with Ipopt
//      (plbhac_makespan_nlp.h explains why that is the same as equal finish times);
//   2. PUs whose optimal share is ~0 are left out and the rest re-solved (their latency
//      would otherwise pin the makespan);
//   3. PUs below their minimum block are left out one at a time and the rest re-solved;
//   4. rounding to the granule with the sum kept exactly W (plbhac_rounding.h).
#pragma once

#include "sched_policies/plbhac/core/plbhac_makespan_nlp.h"
#include "sched_policies/plbhac/core/plbhac_time_curve.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetpu {

// One processing unit as the solver sees it: T_p(x) = F_p(x) + G_p(x), the paper's
// execution and transfer curves, kept separate so a caller can pass its fitted F and G as
// they are. The curves are borrowed, not owned, and must outlive the call.
struct PlbhacPu {
    const TimeCurve *exec = nullptr;      // F_p: processing time of x elements (required)
    const TimeCurve *transfer = nullptr;  // G_p: transfer time of x elements; null = none
    std::int64_t min_block = 0;           // smallest block worth sending (elements), >= 0
    // Seconds until the PU is free to start this block (work already queued on it). The
    // solve equalises absolute finish times ready_s + T_p(x_p): PUs that run asynchronously
    // drift apart, and equal block durations would carry the drift to the end of the run.
    double ready_s = 0;
};

// Who solves step 1 (HETPU_PLBHAC_SOLVER).
enum class PlbhacSolver {
    // The equal-finish search when every curve increases over (0, W] (sampled; a dip of
    // up to 2%, which the curve choice lets a fit have, counts as increasing), Ipopt
    // otherwise. For increasing curves both find the same optimum; Ipopt takes 2-40 ms per
    // solve of two PUs and the search microseconds, and on a short job the planner's time
    // is the workers' (measured on the CPU + OpenCL node, k-means: 21 passes of ~30 ms
    // each spent 113 ms in Ipopt before their first blocks could start; 1 ms searching).
    Auto,
    // Ipopt for every solve of fewer than equal_finish_from_pus PUs, as the PLB-HAC paper
    // solves system (3); the search still checks each answer (see plbhac_solve).
    Ipopt,
};

struct PlbhacSolveOptions {
    PlbhacSolver solver = PlbhacSolver::Auto;
    // Blocks are multiples of this many elements (except the tail W mod granule, which
    // goes to the largest block). A PU's min_block is rounded up to a multiple of it.
    std::int64_t granule = 1;
    // A continuous share at or below negligible_share * W counts as "no gain" (step 2).
    // Ipopt's interior point leaves a PU that should get nothing at a share of order of its
    // tolerance rather than exactly 0; 1e-6 is far above that, and a PU dropped by this test
    // would have received at most a millionth of W (less than a granule in practice).
    double negligible_share = 1e-6;
    MakespanNlpOptions nlp;
    // From this many PUs in one solve on, the equal-finish search (plbhac_equal_finish.h)
    // replaces Ipopt: same optimum for increasing curves, O(PUs) per iteration instead of
    // a dense NLP whose cost grows faster than linearly (a minute per planner step at 1024).
    std::size_t equal_finish_from_pus = 128;
};

// Why a PU got the block it got.
enum class PlbhacOutcome {
    Active,         // got a block > 0
    NoGain,         // its optimal share was ~0: slower than the others even for a tiny block
    BelowMinimum,   // its share was below its (granule-rounded) min_block
    RoundedToZero,  // positive share, but less than a granule survived rounding
};

const char *plbhac_outcome_name(PlbhacOutcome o);

struct PlbhacSolution {
    std::vector<std::int64_t> blocks;    // per PU, elements; sum == W exactly
    std::vector<double> finish_s;        // per PU, predicted ready_s + T_p(block) (0 if block == 0)
    std::vector<double> shares;          // per PU, continuous share of the last solve
    std::vector<PlbhacOutcome> outcome;  // per PU
    double makespan_s = 0;               // max finish_s (after rounding)
    double continuous_makespan_s = 0;    // the NLP's optimal t (before rounding)
    double solve_time_s = 0;             // wall time of the whole call (steady_clock)
    int ipopt_status = 0;                // status of the last Ipopt solve (see below)
    std::string ipopt_status_name;
    int ipopt_iterations = 0;  // summed over all Ipopt solves (0 when the search alone answered)
    int nlp_solves = 0;        // solves of step 1 for two PUs or more, by either solver; 0
                               // when one PU or W == 0 (status then reads Solve_Succeeded)
};

// Bad input: null exec curve, no PU, W < 0, granule < 1, min_block < 0, bad option.
class PlbhacInputError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Ipopt did not converge (any status other than Solve_Succeeded and
// Solved_To_Acceptable_Level). Raised instead of returning unconverged block sizes.
class PlbhacSolveError : public std::runtime_error {
public:
    PlbhacSolveError(const std::string &what, int status) : std::runtime_error(what), ipopt_status(status) {}
    int ipopt_status;
};

// The block sizes of one virtual step for workload W (elements). W == 0 gives all-zero
// blocks without calling Ipopt. Throws PlbhacInputError or
// PlbhacSolveError as above. Thread-safe (Ipopt calls are serialised internally).
PlbhacSolution plbhac_solve(const std::vector<PlbhacPu> &pus, std::int64_t W,
                            const PlbhacSolveOptions &opt = PlbhacSolveOptions());

}  // namespace hetpu
