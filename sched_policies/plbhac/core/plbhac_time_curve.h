// SPDX-License-Identifier: LGPL-2.1-or-later
// The one thing the PLB-HAC block-size solve needs from a performance model: the predicted
// time of one block of x elements on one PU, with its first and second derivatives.
//
// This is deliberately a tiny interface rather than the fitted-curve classes themselves:
// the curve fitting ("determineModel") lives elsewhere and may change shape
// (linear, quadratic, x log x, ...) without touching the solver. A fitted model only has
// to be wrapped in an adapter that implements eval().
#pragma once

namespace hetpu {

// Value and derivatives of a time curve at one point. Units: seconds, seconds/element,
// seconds/element^2.
struct TimeEval {
    double value = 0;
    double d1 = 0;  // dT/dx
    double d2 = 0;  // d2T/dx2
};

class TimeCurve {
public:
    virtual ~TimeCurve() = default;

    // T(x) and its derivatives. The solver calls this for 0 < x <= W only (Ipopt is run
    // without bound relaxation, so it never probes outside the box); curves such as
    // x*log(x) therefore need no guard at x <= 0. Derivatives must be exact: Ipopt is run
    // with the exact Hessian, and a wrong d1/d2 shows up as slow or failed convergence.
    // One virtual call returns all three because fitted curves share most of the work
    // (a log, a power) between value and derivatives.
    virtual TimeEval eval(double x) const = 0;
};

}  // namespace hetpu
