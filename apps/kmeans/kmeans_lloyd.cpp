// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_lloyd.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
#include <vector>

#include "apps/common/splitmix.h"
#include "apps/kmeans/kmeans_kernels.h"

namespace hetpu::kmeans {

namespace {

// Adds points [lo, hi)'s sums, counts and inertia, in point order, to partial (zeroed).
void sum_chunk(const double *x, uint64_t lo, uint64_t hi, const double *centroids, uint32_t k, uint32_t d,
               const int32_t *labels, double *partial)
{
    double *sums = partial, *counts = partial + static_cast<uint64_t>(k) * d, *inertia = counts + k;
    for (uint64_t i = lo; i < hi; ++i) {
        const int32_t c = labels[i];
        const double *xi = x + i * d;
        double dist2 = 0;
        for (uint32_t j = 0; j < d; ++j) {
            sums[c * d + j] += xi[j];
            const double diff = xi[j] - centroids[c * d + j];
            dist2 += diff * diff;
        }
        counts[c] += 1.0;
        *inertia += dist2;
    }
}

}  // namespace

void assign_block(const double *x, uint64_t count, const double *centroids, uint32_t k, uint32_t d, int32_t *labels,
                  double *partial, int threads)
{
    const int64_t n = static_cast<int64_t>(count);
    const int nthreads = threads > 0 ? threads : 1;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        double dist2;
        labels[i] = nearest_centroid(x + i * d, centroids, k, d, &dist2);
    }
    // The order of hetpu_kmeans_chunk_points (kmeans_kernels.h), which the OpenCL and CUDA
    // kernels follow too.
    const uint64_t items = partial_size(k, d), chunk = hetpu_kmeans_chunk_points(count);
    const int64_t chunks = static_cast<int64_t>((count + chunk - 1) / chunk);
    std::fill(partial, partial + items, 0.0);
    std::vector<double> per_chunk(static_cast<uint64_t>(chunks) * items, 0.0);
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (int64_t q = 0; q < chunks; ++q)
        sum_chunk(x, static_cast<uint64_t>(q) * chunk, std::min(count, static_cast<uint64_t>(q + 1) * chunk), centroids,
                  k, d, labels, &per_chunk[static_cast<uint64_t>(q) * items]);
    for (int64_t q = 0; q < chunks; ++q)
        for (uint64_t g = 0; g < items; ++g)
            partial[g] += per_chunk[static_cast<uint64_t>(q) * items + g];
}

double absolute_tolerance(const Points &p, double tol)
{
    double total = 0;
    for (uint32_t j = 0; j < p.d; ++j) {
        double mean = 0, m2 = 0;
        for (uint64_t i = 0; i < p.n; ++i)  // Welford: stable for offset data
        {
            const double v = p.x[i * p.d + j];
            const double delta = v - mean;
            mean += delta / static_cast<double>(i + 1);
            m2 += delta * (v - mean);
        }
        total += m2 / static_cast<double>(p.n);
    }
    return tol * total / p.d;
}

IterationState initial_state(const Points &p, uint32_t k, uint64_t seed)
{
    apps::SplitMix64 rng{seed ^ 0x6b2b3b4b5b6b7b8bull};
    const uint32_t d = p.d;
    IterationState s;
    s.centroids.reserve(static_cast<size_t>(k) * d);
    std::vector<double> closest(p.n);  // D^2 to the nearest chosen centre
    auto add_centre = [&](uint64_t i) {
        s.centroids.insert(s.centroids.end(), p.x.begin() + i * d, p.x.begin() + (i + 1) * d);
    };
    auto dist2 = [&](uint64_t i, uint64_t j) {
        double t = 0;
        for (uint32_t c = 0; c < d; ++c) {
            const double diff = p.x[i * d + c] - p.x[j * d + c];
            t += diff * diff;
        }
        return t;
    };
    uint64_t first = rng.below(p.n);
    add_centre(first);
    double potential = 0;
    for (uint64_t i = 0; i < p.n; ++i)
        potential += closest[i] = dist2(i, first);
    const unsigned trials = 2 + static_cast<unsigned>(std::log(static_cast<double>(k)));
    std::vector<double> best_closest(p.n), cand_closest(p.n);
    for (uint32_t c = 1; c < k; ++c) {
        uint64_t best = 0;
        double best_potential = std::numeric_limits<double>::infinity();
        for (unsigned t = 0; t < trials; ++t) {
            // D^2 sampling; all-zero potential (duplicates only): uniform.
            uint64_t cand = 0;
            if (potential > 0) {
                double r = rng.uniform() * potential, acc = 0;
                cand = p.n - 1;
                for (uint64_t i = 0; i < p.n; ++i) {
                    acc += closest[i];
                    if (acc > r) {
                        cand = i;
                        break;
                    }
                }
            } else {
                cand = rng.below(p.n);
            }
            double pot = 0;
            for (uint64_t i = 0; i < p.n; ++i)
                pot += cand_closest[i] = std::min(closest[i], dist2(i, cand));
            if (pot < best_potential) {
                best_potential = pot;
                best = cand;
                best_closest.swap(cand_closest);
            }
        }
        add_centre(best);
        closest.swap(best_closest);
        potential = best_potential;
    }
    s.rng_state = rng.state;
    return s;
}

int run_lloyd(const Points &p, const LloydSettings &settings, IterationState &state, const AssignPass &assign,
              const IterationHook &hook, LloydResult &result)
{
    const uint32_t k = settings.k, d = p.d;
    const double tol_abs = absolute_tolerance(p, settings.tol);
    std::vector<int32_t> labels(p.n, -1), previous;
    std::vector<double> totals(partial_size(k, d));
    result.passes = 0;
    for (;;) {
        previous.swap(labels);
        labels.assign(p.n, -1);
        if (int rc = assign(state.centroids, labels, totals); rc != 0)
            return rc;
        ++result.passes;
        state.inertia = totals[partial_size(k, d) - 1];
        state.changed = 0;
        for (uint64_t i = 0; i < p.n; ++i)
            state.changed += labels[i] != previous[i];
        if (state.converged || state.iteration >= settings.max_iter)
            break;
        const double *sums = totals.data(), *counts = totals.data() + static_cast<uint64_t>(k) * d;
        double shift2 = 0;
        for (uint32_t c = 0; c < k; ++c) {
            if (counts[c] == 0)
                continue;  // empty cluster: keep its centroid
            for (uint32_t j = 0; j < d; ++j) {
                const double v = sums[c * d + j] / counts[c];
                const double diff = v - state.centroids[c * d + j];
                shift2 += diff * diff;
                state.centroids[c * d + j] = v;
            }
        }
        state.shift2 = shift2;
        ++state.iteration;
        state.converged = state.changed == 0 || shift2 <= tol_abs;
        // ---- checkpoint/restart hook point: the state is complete and consistent here.
        if (hook)
            if (int rc = hook(state); rc != 0)
                return rc;
    }
    result.labels.swap(labels);
    return 0;
}

int reference_kmeans(const Points &p, const LloydSettings &settings, uint64_t seed, IterationState &state,
                     LloydResult &result)
{
    state = initial_state(p, settings.k, seed);
    AssignPass serial = [&](const std::vector<double> &c, std::vector<int32_t> &labels, std::vector<double> &totals) {
        assign_block(p.x.data(), p.n, c.data(), settings.k, p.d, labels.data(), totals.data(), 1);
        return 0;
    };
    return run_lloyd(p, settings, state, serial, nullptr, result);
}

double centre_recovery_error(const std::vector<double> &found, const std::vector<double> &truth, uint32_t d)
{
    double worst = 0;
    for (size_t t = 0; t + d <= truth.size(); t += d) {
        double best = std::numeric_limits<double>::infinity();
        for (size_t f = 0; f + d <= found.size(); f += d) {
            double s = 0;
            for (uint32_t j = 0; j < d; ++j)
                s += (truth[t + j] - found[f + j]) * (truth[t + j] - found[f + j]);
            best = std::min(best, s);
        }
        worst = std::max(worst, std::sqrt(best));
    }
    return worst;
}

}  // namespace hetpu::kmeans
