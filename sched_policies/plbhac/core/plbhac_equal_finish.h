// SPDX-License-Identifier: LGPL-2.1-or-later
// The same min-makespan problem as plbhac_makespan_nlp.h, solved without Ipopt for many PUs:
//
//     minimise t   subject to   T_p(x_p) <= t  (p = 1..k),   sum_p x_p = W,   0 <= x_p <= W.
//
// Why: Ipopt treats the problem as a k-variable NLP whose cost grows faster than linearly in
// k (about 25 ms at 8 PUs, 0.26 s at 256), and a planner step may solve it several times
// (PUs dropped below their minimum, trust-region re-solves). At 1024 PUs a step took over a
// minute. With increasing curves the problem is one-dimensional: for a candidate finish time
// t each PU's largest block within t is x_p(t) = T_p^-1(t) (clamped to [0, W]), which grows
// with t, so the optimal t is the smallest one with sum_p x_p(t) >= W and t >= max_p T_p(0)
// (the smooth model charges T_p(0) even to an empty block, as the NLP does). Both the inner
// inverses and the outer t are found by safeguarded Newton steps inside shrinking brackets:
// O(k) curve evaluations per outer iteration, a few dozen outer iterations.
//
// A curve that is not increasing everywhere (a fitted quadratic can dip) still gets a
// feasible answer: each inverse is some crossing of T_p = t within the PU's bracket, and the
// returned makespan is max_p T_p(x_p) of the shares returned.
#pragma once

#include "sched_policies/plbhac/core/plbhac_makespan_nlp.h"
#include "sched_policies/plbhac/core/plbhac_time_curve.h"

#include <vector>

namespace hetpu {

// Solves the problem for the given curves (non-null, at least one) and finite W > 0.
// `converged` is false only when the outer search hit its iteration limit; the shares still
// sum to W and are feasible for the makespan reported. ipopt_status is 0 and
// ipopt_status_name "Equal_Finish_Search" so that traces tell the two solvers apart.
// Throws std::invalid_argument for bad arguments.
MakespanNlpResult solve_makespan_equal_finish(const std::vector<const TimeCurve *> &curves, double W);

// Which PUs the optimum leaves empty when an empty block costs nothing: those whose empty
// block (T_p of the smallest positive size) ends no earlier than the PUs that start sooner
// finish all of W. The problem above charges T_p(0) to every PU, so one such PU pins its
// makespan there and gets a negligible share; dropping it and solving again finds the next,
// one per solve (seen in simulation: a final re-share of 1,024 PUs, hundreds of them busy
// past the others' end, took 550 solves and 3 s). This finds them all at once: with the PUs
// sorted by that start, S_j = sum over the PUs starting before start_j of x_p(start_j)
// grows with j, and every PU from the first j with S_j >= W on cannot finish a block before
// the others have finished everything. Each x_p(t) is the inverse's feasible size
// (T_p(x_p) <= t), so for curves that are not increasing S_j is only underestimated and
// fewer PUs are flagged, never one that could help. The flags are in the curves' order;
// none is set when every PU can take part. Same arguments and errors as above.
std::vector<bool> empty_at_optimum(const std::vector<const TimeCurve *> &curves, double W);

}  // namespace hetpu
