// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/core/curve_basis.h"

#include <cmath>

namespace hetpu {

double basis_value(BasisFn f, double u)
{
    switch (f) {
    case BasisFn::Constant: return 1.0;
    case BasisFn::X: return u;
    case BasisFn::X2: return u * u;
    case BasisFn::X3: return u * u * u;
    case BasisFn::Exp: return std::exp(u);
    case BasisFn::Log: return std::log(u);
    case BasisFn::XExp: return u * std::exp(u);
    case BasisFn::XLog: return u * std::log(u);
    }
    return 0.0;  // unreachable: the switch covers the enum
}

double basis_derivative(BasisFn f, double u)
{
    switch (f) {
    case BasisFn::Constant: return 0.0;
    case BasisFn::X: return 1.0;
    case BasisFn::X2: return 2.0 * u;
    case BasisFn::X3: return 3.0 * u * u;
    case BasisFn::Exp: return std::exp(u);
    case BasisFn::Log: return 1.0 / u;
    case BasisFn::XExp: return (1.0 + u) * std::exp(u);
    case BasisFn::XLog: return std::log(u) + 1.0;
    }
    return 0.0;
}

std::string basis_name(BasisFn f)
{
    switch (f) {
    case BasisFn::Constant: return "1";
    case BasisFn::X: return "u";
    case BasisFn::X2: return "u^2";
    case BasisFn::X3: return "u^3";
    case BasisFn::Exp: return "exp(u)";
    case BasisFn::Log: return "ln(u)";
    case BasisFn::XExp: return "u*exp(u)";
    case BasisFn::XLog: return "u*ln(u)";
    }
    return "?";
}

std::optional<BasisFn> basis_from_name(const std::string &name)
{
    for (BasisFn f : kAllBasisFns)
        if (basis_name(f) == name)
            return f;
    return std::nullopt;
}

}  // namespace hetpu
