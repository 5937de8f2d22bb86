// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_makespan_nlp.h"

// Ipopt 3.11's headers trigger -Wunused-parameter under -Wextra; they are not ours to fix,
// and configure passes IPOPT_CFLAGS with -I (not -isystem), so silence them here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <IpIpoptApplication.hpp>
#include <IpSolveStatistics.hpp>
#include <IpTNLP.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace hetpu {
namespace {

using Ipopt::Index;
using Ipopt::Number;

// The NLP in normalised variables: y_p = x_p / W in [0, 1] (the paper's "input normalised to
// 1") and s = t / tau, with tau = the best single-PU time for the whole of W. Both are O(1)
// whatever the units of the caller (elements in the millions, times in micro- or kiloseconds),
// so Ipopt's absolute tolerances mean the same thing for every instance.
//
// Variables: y_0 .. y_{k-1}, s (index k). Constraints: c_p = T_p(W y_p)/tau - s <= 0 for
// p < k, and c_k = sum_p y_p = 1. Objective: s. The Lagrangian's Hessian is diagonal
// (each c_p depends on one y_p, linearly on s), so it has k non-zeros.
class MakespanTnlp : public Ipopt::TNLP {
public:
    MakespanTnlp(const std::vector<const TimeCurve *> &curves, double W, double tau)
        : curves_(curves), k_(static_cast<Index>(curves.size())), W_(W), tau_(tau), y_(curves.size(), 0.0)
    {}

    bool get_nlp_info(Index &n, Index &m, Index &nnz_jac_g, Index &nnz_h_lag, IndexStyleEnum &index_style) override
    {
        n = k_ + 1;
        m = k_ + 1;
        nnz_jac_g = 3 * k_;  // row p < k: (p, p), (p, k); row k: (k, 0..k-1)
        nnz_h_lag = k_;      // (p, p) for p < k
        index_style = C_STYLE;
        return true;
    }

    bool get_bounds_info(Index n, Number *x_l, Number *x_u, Index m, Number *g_l, Number *g_u) override
    {
        const Number inf = 2e19;  // above Ipopt's default nlp_upper_bound_inf (1e19)
        for (Index p = 0; p < k_; ++p) {
            x_l[p] = 0.0;
            x_u[p] = 1.0;
            g_l[p] = -inf;
            g_u[p] = 0.0;
        }
        x_l[n - 1] = -inf;  // t needs no bound: the constraints bound it from below
        x_u[n - 1] = inf;
        g_l[m - 1] = g_u[m - 1] = 1.0;
        return true;
    }

    // Start from the split that would be optimal if every curve were linear through the
    // origin and its value at W (shares proportional to speed W / T_p(W)), with s the
    // resulting makespan, so the start is feasible and usually close to the answer.
    bool get_starting_point(Index n, bool init_x, Number *x, bool init_z, Number *, Number *, Index, bool init_lambda,
                            Number *) override
    {
        if (!init_x || init_z || init_lambda)
            return false;
        std::vector<double> speed(k_);
        double sum = 0;
        for (Index p = 0; p < k_; ++p) {
            const double tw = curves_[p]->eval(W_).value;
            speed[p] = (std::isfinite(tw) && tw > 0) ? 1.0 / tw : 0.0;
            sum += speed[p];
        }
        double s = 0;
        for (Index p = 0; p < k_; ++p) {
            x[p] = sum > 0 ? speed[p] / sum : 1.0 / k_;
            s = std::max(s, curves_[p]->eval(W_ * x[p]).value / tau_);
        }
        x[n - 1] = std::isfinite(s) ? s : 1.0;
        return true;
    }

    bool eval_f(Index n, const Number *x, bool, Number &obj_value) override
    {
        obj_value = x[n - 1];
        return true;
    }

    bool eval_grad_f(Index n, const Number *, bool, Number *grad_f) override
    {
        std::fill(grad_f, grad_f + n, 0.0);
        grad_f[n - 1] = 1.0;
        return true;
    }

    bool eval_g(Index n, const Number *x, bool new_x, Index, Number *g) override
    {
        if (!update(x, new_x))
            return false;
        double sum = 0;
        for (Index p = 0; p < k_; ++p) {
            g[p] = evals_[p].value / tau_ - x[n - 1];
            sum += x[p];
        }
        g[k_] = sum;
        return true;
    }

    bool eval_jac_g(Index, const Number *x, bool new_x, Index, Index, Index *iRow, Index *jCol, Number *values) override
    {
        if (values == nullptr) {
            Index e = 0;
            for (Index p = 0; p < k_; ++p) {
                iRow[e] = p, jCol[e++] = p;
                iRow[e] = p, jCol[e++] = k_;
            }
            for (Index p = 0; p < k_; ++p)
                iRow[e] = k_, jCol[e++] = p;
            return true;
        }
        if (!update(x, new_x))
            return false;
        Index e = 0;
        for (Index p = 0; p < k_; ++p) {
            values[e++] = W_ * evals_[p].d1 / tau_;  // chain rule: d/dy T(W y) = W T'
            values[e++] = -1.0;
        }
        for (Index p = 0; p < k_; ++p)
            values[e++] = 1.0;
        return true;
    }

    // The objective is linear, so obj_factor never contributes; only the time curves do.
    bool eval_h(Index, const Number *x, bool new_x, Number, Index, const Number *lambda, bool, Index, Index *iRow,
                Index *jCol, Number *values) override
    {
        if (values == nullptr) {
            for (Index p = 0; p < k_; ++p)
                iRow[p] = jCol[p] = p;
            return true;
        }
        if (!update(x, new_x))
            return false;
        for (Index p = 0; p < k_; ++p)
            values[p] = lambda[p] * W_ * W_ * evals_[p].d2 / tau_;
        return true;
    }

    void finalize_solution(Ipopt::SolverReturn, Index, const Number *x, const Number *, const Number *, Index,
                           const Number *, const Number *, Number, const Ipopt::IpoptData *,
                           Ipopt::IpoptCalculatedQuantities *) override
    {
        for (Index p = 0; p < k_; ++p)
            y_[p] = x[p];
        have_solution_ = true;
    }

    const std::vector<double> &solution() const { return y_; }
    bool have_solution() const { return have_solution_; }

private:
    // Evaluates every curve once per new point (Ipopt announces it with new_x) and caches
    // value and derivatives for g, its Jacobian and the Hessian. A throwing or non-finite
    // curve makes the evaluation fail, which Ipopt handles by shortening its step instead of
    // carrying NaN into the iterate (and no exception crosses Ipopt's frames).
    bool update(const Number *x, bool new_x)
    {
        if (!new_x && valid_)
            return true;
        valid_ = false;
        evals_.resize(k_);
        try {
            for (Index p = 0; p < k_; ++p) {
                evals_[p] = curves_[p]->eval(W_ * x[p]);
                if (!std::isfinite(evals_[p].value) || !std::isfinite(evals_[p].d1) || !std::isfinite(evals_[p].d2))
                    return false;
            }
        } catch (...) {
            return false;
        }
        valid_ = true;
        return true;
    }

    const std::vector<const TimeCurve *> &curves_;
    const Index k_;
    const double W_, tau_;
    std::vector<TimeEval> evals_;
    bool valid_ = false;
    std::vector<double> y_;
    bool have_solution_ = false;
};

// One IpoptApplication for the process, created on first use and guarded by one mutex.
// Creating an application registers Ipopt's few hundred options and initialises its
// journals; doing that once saves about 0.3 ms of a ~3 ms solve (measured with
// bench/plbhac_solve_speed). Most of the rest is fixed per-call cost inside Ipopt 3.11 (its
// always-on getrusage() timers, ~700 calls per solve, and MUMPS set-up), not the 5 to 10
// iterations themselves. The application keeps no state between OptimizeTNLP calls other
// than its options, which solve_makespan_nlp sets every time. The mutex is needed anyway:
// Debian's Ipopt uses sequential MUMPS, which keeps global state.
struct SharedIpopt {
    std::mutex mutex;
    Ipopt::SmartPtr<Ipopt::IpoptApplication> app;
};

SharedIpopt &shared_ipopt()
{
    static SharedIpopt s;
    return s;
}

}  // namespace

std::string ipopt_status_name(int status)
{
    switch (status) {
    case Ipopt::Solve_Succeeded: return "Solve_Succeeded";
    case Ipopt::Solved_To_Acceptable_Level: return "Solved_To_Acceptable_Level";
    case Ipopt::Infeasible_Problem_Detected: return "Infeasible_Problem_Detected";
    case Ipopt::Search_Direction_Becomes_Too_Small: return "Search_Direction_Becomes_Too_Small";
    case Ipopt::Diverging_Iterates: return "Diverging_Iterates";
    case Ipopt::User_Requested_Stop: return "User_Requested_Stop";
    case Ipopt::Feasible_Point_Found: return "Feasible_Point_Found";
    case Ipopt::Maximum_Iterations_Exceeded: return "Maximum_Iterations_Exceeded";
    case Ipopt::Restoration_Failed: return "Restoration_Failed";
    case Ipopt::Error_In_Step_Computation: return "Error_In_Step_Computation";
    case Ipopt::Maximum_CpuTime_Exceeded: return "Maximum_CpuTime_Exceeded";
    case Ipopt::Not_Enough_Degrees_Of_Freedom: return "Not_Enough_Degrees_Of_Freedom";
    case Ipopt::Invalid_Problem_Definition: return "Invalid_Problem_Definition";
    case Ipopt::Invalid_Option: return "Invalid_Option";
    case Ipopt::Invalid_Number_Detected: return "Invalid_Number_Detected";
    case Ipopt::Unrecoverable_Exception: return "Unrecoverable_Exception";
    case Ipopt::NonIpopt_Exception_Thrown: return "NonIpopt_Exception_Thrown";
    case Ipopt::Insufficient_Memory: return "Insufficient_Memory";
    case Ipopt::Internal_Error: return "Internal_Error";
    }
    return "Unknown_Status_" + std::to_string(status);
}

MakespanNlpResult solve_makespan_nlp(const std::vector<const TimeCurve *> &curves, double W,
                                     const MakespanNlpOptions &opt)
{
    if (curves.empty())
        throw std::invalid_argument("solve_makespan_nlp: no PU");
    for (const TimeCurve *c : curves)
        if (c == nullptr)
            throw std::invalid_argument("solve_makespan_nlp: null time curve");
    if (!(W > 0) || !std::isfinite(W))
        throw std::invalid_argument("solve_makespan_nlp: workload must be finite and > 0");

    MakespanNlpResult res;
    const std::size_t k = curves.size();

    // One PU: nothing to optimise (and Ipopt would report too few degrees of freedom).
    if (k == 1) {
        res.shares.assign(1, W);
        res.makespan_s = curves[0]->eval(W).value;
        res.ipopt_status = Ipopt::Solve_Succeeded;
        res.ipopt_status_name = "Solve_Succeeded";
        res.converged = std::isfinite(res.makespan_s);
        return res;
    }

    double tau = std::numeric_limits<double>::infinity();
    for (const TimeCurve *c : curves) {
        const double tw = c->eval(W).value;
        if (std::isfinite(tw) && tw > 0)
            tau = std::min(tau, tw);
    }
    if (!std::isfinite(tau))
        tau = 1.0;

    Ipopt::SmartPtr<MakespanTnlp> nlp = new MakespanTnlp(curves, W, tau);
    Ipopt::ApplicationReturnStatus status;
    int iterations = -1;
    {
        SharedIpopt &ip = shared_ipopt();
        std::lock_guard<std::mutex> lock(ip.mutex);
        status = Ipopt::Solve_Succeeded;
        if (IsNull(ip.app)) {
            ip.app = IpoptApplicationFactory();
            Ipopt::OptionsList &o = *ip.app->Options();
            o.SetIntegerValue("print_level", 0);
            o.SetStringValue("sb", "yes");  // no banner
            o.SetStringValue("hessian_approximation", "exact");
            // No bound relaxation: the curves are then only evaluated for 0 < x <= W (Ipopt's
            // iterates stay strictly interior), which TimeCurve promises to its implementers.
            o.SetNumericValue("bound_relax_factor", 0.0);
            // Initialize("") rather than Initialize(): the default reads ./ipopt.opt, and a
            // stray options file in the application's working directory must not change
            // scheduling.
            status = ip.app->Initialize("");
            if (status != Ipopt::Solve_Succeeded)
                ip.app = nullptr;  // try again next time rather than keep a broken one
        }
        if (IsValid(ip.app)) {
            Ipopt::OptionsList &o = *ip.app->Options();
            o.SetNumericValue("tol", opt.tol);
            o.SetNumericValue("acceptable_tol", opt.acceptable_tol);
            o.SetIntegerValue("max_iter", opt.max_iter);
            status = ip.app->OptimizeTNLP(Ipopt::SmartPtr<Ipopt::TNLP>(GetRawPtr(nlp)));
            if (IsValid(ip.app->Statistics()))
                iterations = ip.app->Statistics()->IterationCount();
        }
    }

    res.ipopt_status = status;
    res.ipopt_status_name = ipopt_status_name(status);
    res.iterations = iterations;
    res.converged =
        (status == Ipopt::Solve_Succeeded || status == Ipopt::Solved_To_Acceptable_Level) && nlp->have_solution();
    if (!res.converged)
        return res;

    // Map back to elements. Clamp tiny negative round-off and renormalise so the shares sum
    // to W exactly up to floating point (Ipopt meets the equality only to its tolerance).
    res.shares.resize(k);
    double sum = 0;
    for (std::size_t p = 0; p < k; ++p) {
        res.shares[p] = std::clamp(nlp->solution()[p], 0.0, 1.0);
        sum += res.shares[p];
    }
    if (!(sum > 0) || !std::isfinite(sum)) {
        res.converged = false;
        return res;
    }
    res.makespan_s = 0;
    for (std::size_t p = 0; p < k; ++p) {
        res.shares[p] *= W / sum;
        res.makespan_s = std::max(res.makespan_s, curves[p]->eval(res.shares[p]).value);
    }
    return res;
}

}  // namespace hetpu
