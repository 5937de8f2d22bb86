// SPDX-License-Identifier: LGPL-2.1-or-later
// The time curve most PLB-HAC solver tests are written in: T(x) = latency + b x + a x^2
// (seconds, x in elements), with its exact derivatives.
#pragma once

#include "sched_policies/plbhac/core/plbhac_time_curve.h"

namespace hetpu::testing {

class Quadratic : public TimeCurve {
public:
    Quadratic(double latency, double b, double a) : l_(latency), b_(b), a_(a) {}
    TimeEval eval(double x) const override { return TimeEval{l_ + b_ * x + a_ * x * x, b_ + 2 * a_ * x, 2 * a_}; }

private:
    double l_, b_, a_;
};

}  // namespace hetpu::testing
