// SPDX-License-Identifier: LGPL-2.1-or-later
// The candidate functions f_i of PLB-HAC's execution-time model F_p(x) = sum a_i f_i(x)
// (paper section 3.1: x, x^2, x^3, e^x, ln x, x e^x, x ln x), plus a constant term that
// models a fixed per-block overhead (kernel launch, task submission) that none of the
// paper's functions can represent without distorting the shape.
//
// The functions are evaluated on the scaled size u = x / s (s > 0, see fitted_curve.h),
// never on raw element counts: e^x overflows a double for x > 709, and columns such as x^3
// and ln x differ by many orders of magnitude on raw sizes, which ruins the conditioning
// of the least-squares design matrix. With s = the largest observed size, u is in (0, 1]
// on the data and every column is O(1).
#pragma once

#include <array>
#include <optional>
#include <string>

namespace hetpu {

enum class BasisFn { Constant, X, X2, X3, Exp, Log, XExp, XLog };

constexpr std::array<BasisFn, 8> kAllBasisFns = {BasisFn::Constant, BasisFn::X,   BasisFn::X2,   BasisFn::X3,
                                                 BasisFn::Exp,      BasisFn::Log, BasisFn::XExp, BasisFn::XLog};

// f(u) for u > 0.
double basis_value(BasisFn f, double u);

// df/du for u > 0 (the model's derivative is needed exactly by the Ipopt block-size solve).
double basis_derivative(BasisFn f, double u);

// Human-readable form in terms of u, e.g. "u^3", "u*ln(u)", "1".
std::string basis_name(BasisFn f);

// The function basis_name() names; nullopt for any other text.
std::optional<BasisFn> basis_from_name(const std::string &name);

}  // namespace hetpu
