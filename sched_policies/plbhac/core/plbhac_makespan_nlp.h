// SPDX-License-Identifier: LGPL-2.1-or-later
// The continuous core of PLB-HAC's model evaluation (system (3)), solved with
// Ipopt as the paper does: split a workload of W elements among k PUs with time curves
// T_p so that the predicted makespan is minimal,
//
//     minimise t   subject to   T_p(x_p) <= t  (p = 1..k),   sum_p x_p = W,   0 <= x_p <= W.
//
// Why this formulation rather than the paper's literal "T_1(x_1) = ... = T_k(x_k)":
// with strictly increasing curves both have the same solution whenever every PU gets work
// (all x_p > 0). Suppose at the optimum some PU q finished strictly before t. Every PU that
// finishes at t has work (x > 0), so moving a small amount of work from each of them to q
// lowers each of their times strictly while q stays below t: t decreases, contradicting
// optimality. So every constraint is tight and sum x_p = W, which is exactly system (3);
// conversely the solution of (3) is unique for increasing curves and is this optimum.
// Unlike system (3), the min-makespan problem always has a solution: when a PU is so slow
// that even an empty block would finish after the others are done (a large latency T_p(0)),
// equal finish times have no solution with x_p >= 0, whereas here that PU just gets x_p = 0.
// (Its constraint then pins t at T_p(0) because the smooth model cannot say "no block, no
// latency"; the caller drops such PUs and re-solves, see plbhac_solve.cpp.)
//
// This file owns everything that touches Ipopt; its header stays Ipopt-free so that callers
// need no Ipopt include path.
#pragma once

#include "sched_policies/plbhac/core/plbhac_time_curve.h"

#include <string>
#include <vector>

namespace hetpu {

struct MakespanNlpResult {
    std::vector<double> shares;     // x_p in elements, one per curve, sum = W (to tolerance)
    double makespan_s = 0;          // the optimal t (max_p T_p(x_p))
    int ipopt_status = 0;           // Ipopt::ApplicationReturnStatus as an int
    std::string ipopt_status_name;  // e.g. "Solve_Succeeded"
    int iterations = 0;             // Ipopt iterations (-1 if Ipopt did not report them)
    bool converged = false;         // Solve_Succeeded or Solved_To_Acceptable_Level
};

struct MakespanNlpOptions {
    double tol = 1e-10;            // Ipopt "tol" (on the normalised problem, see .cpp)
    double acceptable_tol = 1e-7;  // Ipopt "acceptable_tol"
    // Ipopt "max_iter". A step's solve takes 6-8 iterations (bench/plbhac_solve_speed);
    // one that needs many more is on curves it crawls on, where plbhac_solve's equal-finish
    // search answers anyway (seen: 16 PUs with noisy fitted curves, 200-iteration passes,
    // 14-22 s of planning in a 36 s job; 7 s with 60).
    int max_iter = 60;
};

// Solves the problem above for the given curves (non-null, at least one) and W > 0. Never
// throws for a numerical failure: the caller reads `converged` and the status. Throws
// std::invalid_argument for bad arguments. Serialised by a process-wide mutex because the
// sequential MUMPS linear solver that Debian's Ipopt uses keeps global state.
MakespanNlpResult solve_makespan_nlp(const std::vector<const TimeCurve *> &curves, double W,
                                     const MakespanNlpOptions &opt = MakespanNlpOptions());

// Ipopt's name for an ApplicationReturnStatus value ("Unknown_Status_<n>" otherwise).
std::string ipopt_status_name(int status);

}  // namespace hetpu
