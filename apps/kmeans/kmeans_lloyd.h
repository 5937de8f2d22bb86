// SPDX-License-Identifier: LGPL-2.1-or-later
// Lloyd's k-means with greedy k-means++ initialisation. Pure C++: the assignment step is
// a callback, so the same loop drives the StarPU run (one divisible job per pass) and the
// straightforward serial reference the tests compare with.
//
// Determinism: the nearest centroid and the block partials are computed with one fixed
// order of floating-point operations (compiled without FMA contraction), the same as the
// OpenCL and CUDA kernels, so every device gives bit-identical labels and partials for
// the same block.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/kmeans/kmeans_collective.h"
#include "apps/kmeans/kmeans_data.h"

namespace hetpu::kmeans {

// Squared distance from x to each centroid in order; the first smallest wins.
inline int32_t nearest_centroid(const double *x, const double *centroids, uint32_t k, uint32_t d, double *dist2)
{
    int32_t best = 0;
    double best_d = 0;
    for (uint32_t c = 0; c < k; ++c) {
        double s = 0;
        for (uint32_t j = 0; j < d; ++j) {
            const double diff = x[j] - centroids[c * d + j];
            s += diff * diff;
        }
        if (c == 0 || s < best_d) {
            best_d = s;
            best = static_cast<int32_t>(c);
        }
    }
    *dist2 = best_d;
    return best;
}

// Layout of one block's partial result: sums (k x d), counts (k), inertia (1).
inline uint64_t partial_size(uint32_t k, uint32_t d) { return static_cast<uint64_t>(k) * d + k + 1; }

// Assignment step for points [0, count) of x: labels, and the partial result summed in
// the fixed order of hetpu_kmeans_chunk_points (kmeans_kernels.h): chunks of consecutive
// points, each in point order, then the chunks in order. threads > 1 spreads the labelling
// and the chunks over OpenMP threads; the order, hence the result, does not depend on it.
void assign_block(const double *x, uint64_t count, const double *centroids, uint32_t k, uint32_t d, int32_t *labels,
                  double *partial, int threads);

// Everything one Lloyd iteration carries to the next: what a checkpoint must save and a
// restart must restore (the points and settings come from the command line again).
struct IterationState {
    std::vector<double> centroids;  // k x d
    uint32_t iteration = 0;         // centroid updates done
    uint64_t rng_state = 0;         // SplitMix64 state after initialisation
    double inertia = 0;             // of the last assignment pass
    double shift2 = 0;              // sum of squared centroid moves in the last update
    uint64_t changed = 0;           // labels changed by the last pass
    bool converged = false;
};

struct LloydSettings {
    uint32_t k = 0;
    uint32_t max_iter = 100;
    // Converged when the centroids move by at most tol x (mean per-dimension variance of
    // the data) in squared distance summed over centroids, or no label changes.
    double tol = 1e-6;
};

// Greedy k-means++ (each new centre is the best of 2 + floor(ln k) D^2-sampled candidates);
// k <= n. The state's rng_state continues from the seed.
IterationState initial_state(const Points &p, uint32_t k, uint64_t seed);

// tol scaled by the data's mean per-dimension variance.
double absolute_tolerance(const Points &p, double tol);

// The same over points split across processes (collective; the variances of the shares
// combined in rank order). 0 or the collective's error.
int absolute_tolerance(const PointShare &share, double tol, Collective &comm, double &out);

// initial_state() over points split across processes (collective): the same draws on every
// process, each sampled point resolved by the process holding it. On one process it is
// initial_state() exactly; over several the potentials are sums of per-process sums, so a
// draw may differ only where rounding moves a sampling boundary. 0 or the collective's error.
int initial_state(const PointShare &share, uint32_t k, uint64_t seed, Collective &comm, IterationState &state);

// One assignment pass over all points with these centroids: fills labels (n) and the
// totals (partial_size layout, blocks reduced in point order). Returns 0 or -errno.
using AssignPass =
    std::function<int(const std::vector<double> &centroids, std::vector<int32_t> &labels, std::vector<double> &totals)>;

// Called after every centroid update, before the next pass. Checkpoint/restart
// (--checkpoint-every K, --restart) hooks in here: it sees the whole IterationState.
// Return 0 to continue or -errno to stop the run with that error.
using IterationHook = std::function<int(const IterationState &)>;

struct LloydResult {
    std::vector<int32_t> labels;
    uint32_t passes = 0;  // assignment passes (iterations + 1: the last one labels the final centroids)
};

// Runs passes and updates from state until converged or state.iteration == max_iter. The
// final pass always uses the final centroids, so labels and inertia match them. An empty
// cluster keeps its previous centroid. Returns 0 or the first error of assign/hook.
int run_lloyd(const Points &p, const LloydSettings &settings, IterationState &state, const AssignPass &assign,
              const IterationHook &hook, LloydResult &result);

// run_lloyd() over points split across processes (collective): assign() fills this
// process's labels (share.local.n) and its own partial totals; the totals and the count of
// changed labels are summed over the processes in rank order, so every process takes the
// same decisions.
int run_lloyd(const PointShare &share, const LloydSettings &settings, IterationState &state, const AssignPass &assign,
              const IterationHook &hook, LloydResult &result, Collective &comm);

// The serial reference over this process's points (collective over several processes).
int reference_kmeans(const PointShare &share, const LloydSettings &settings, uint64_t seed, IterationState &state,
                     LloydResult &result, Collective &comm);

// The serial reference: the same loop with one assign_block over all points.
int reference_kmeans(const Points &p, const LloydSettings &settings, uint64_t seed, IterationState &state,
                     LloydResult &result);

// Largest distance from a true centre to the nearest recovered centroid (k x d each).
double centre_recovery_error(const std::vector<double> &found, const std::vector<double> &truth, uint32_t d);

}  // namespace hetpu::kmeans
