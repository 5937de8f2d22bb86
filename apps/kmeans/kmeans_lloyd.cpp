// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_lloyd.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
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

namespace {

// Mean and sum of squared deviations of one dimension over a set of points (Welford, and
// Chan et al.'s pairwise combination of sets).
struct Moments {
    double count = 0, mean = 0, m2 = 0;
};

Moments combine(const Moments &a, const Moments &b)
{
    if (a.count == 0)
        return b;  // one set alone keeps its own bits
    if (b.count == 0)
        return a;
    Moments m;
    m.count = a.count + b.count;
    const double delta = b.mean - a.mean;
    m.mean = a.mean + delta * b.count / m.count;
    m.m2 = a.m2 + b.m2 + delta * delta * a.count * b.count / m.count;
    return m;
}

double dist2_to(const double *x, const double *centre, uint32_t d)
{
    double t = 0;
    for (uint32_t c = 0; c < d; ++c) {
        const double diff = x[c] - centre[c];
        t += diff * diff;
    }
    return t;
}

// One D^2-sampling draw or a uniform one, resolved to a global point index by the process
// that holds it: the others leave their slot zero.
struct Candidate {
    bool d2 = false;
    double r = 0;        // D^2 sampling: the position in the cumulative potential
    uint64_t index = 0;  // uniform: the point
};

}  // namespace

int absolute_tolerance(const PointShare &s, double tol, Collective &c, double &out)
{
    const Points &p = s.local;
    std::vector<double> mine(3 * static_cast<size_t>(p.d));
    for (uint32_t j = 0; j < p.d; ++j) {
        double mean = 0, m2 = 0;
        for (uint64_t i = 0; i < p.n; ++i)  // Welford: stable for offset data
        {
            const double v = p.x[i * p.d + j];
            const double delta = v - mean;
            mean += delta / static_cast<double>(i + 1);
            m2 += delta * (v - mean);
        }
        mine[3 * j] = static_cast<double>(p.n);
        mine[3 * j + 1] = mean;
        mine[3 * j + 2] = m2;
    }
    std::vector<unsigned char> all;
    if (int rc = c.all_gather(mine.data(), mine.size() * sizeof(double), all); rc != 0)
        return rc;
    const auto *parts = reinterpret_cast<const double *>(all.data());
    double total = 0;
    for (uint32_t j = 0; j < p.d; ++j) {
        Moments m;
        for (int r = 0; r < c.size(); ++r) {
            const double *part = parts + static_cast<size_t>(r) * mine.size() + 3 * j;
            m = combine(m, Moments{part[0], part[1], part[2]});
        }
        total += m.m2 / static_cast<double>(s.total);
    }
    out = tol * total / p.d;
    return 0;
}

double absolute_tolerance(const Points &p, double tol)
{
    SingleProcess single;
    double out = 0;
    absolute_tolerance(whole(p), tol, single, out);
    return out;
}

// Greedy k-means++ over points split across processes. Every process draws the same random
// numbers; a sampled point is resolved by the process holding it and its coordinates are
// shared, and every candidate's potential is the sum of the processes' partial potentials
// in rank order. A single process therefore follows the serial algorithm step for step.
int initial_state(const PointShare &share, uint32_t k, uint64_t seed, Collective &comm, IterationState &s)
{
    const Points &p = share.local;
    apps::SplitMix64 rng{seed ^ 0x6b2b3b4b5b6b7b8bull};
    const uint32_t d = p.d;
    const int ranks = comm.size(), me = comm.rank();
    s = IterationState{};
    s.centroids.reserve(static_cast<size_t>(k) * d);
    auto mine = [&](uint64_t g) { return g >= share.offset && g - share.offset < p.n; };

    // The coordinates of the points at these global indices (index stored first), from
    // their holders; exact, since the others contribute zeros.
    std::vector<double> coords;
    auto resolve = [&](std::vector<double> &v) { return comm.sum(v); };
    auto fetch = [&](const std::vector<uint64_t> &idx, std::vector<double> &out) {
        out.assign(idx.size() * d, 0.0);
        for (size_t t = 0; t < idx.size(); ++t)
            if (mine(idx[t]))
                std::copy(p.x.begin() + (idx[t] - share.offset) * d, p.x.begin() + (idx[t] - share.offset + 1) * d,
                          out.begin() + t * d);
        return resolve(out);
    };
    // Sum over processes, in rank order, of per-process values (one per entry).
    auto total_of = [&](const std::vector<double> &local, std::vector<double> &per_rank, std::vector<double> &sum) {
        std::vector<unsigned char> all;
        if (int rc = comm.all_gather(local.data(), local.size() * sizeof(double), all); rc != 0)
            return rc;
        per_rank.resize(static_cast<size_t>(ranks) * local.size());
        std::memcpy(per_rank.data(), all.data(), per_rank.size() * sizeof(double));
        sum.assign(local.size(), 0.0);
        for (int r = 0; r < ranks; ++r)
            for (size_t t = 0; t < local.size(); ++t)
                sum[t] = r == 0 ? per_rank[static_cast<size_t>(r) * local.size() + t]
                                : sum[t] + per_rank[static_cast<size_t>(r) * local.size() + t];
        return 0;
    };

    std::vector<double> closest(p.n);  // D^2 to the nearest chosen centre
    const uint64_t first = rng.below(share.total);
    if (int rc = fetch({first}, coords); rc != 0)
        return rc;
    s.centroids.insert(s.centroids.end(), coords.begin(), coords.end());
    std::vector<double> local_pot(1, 0.0), pot_per_rank, potential_sum;
    for (uint64_t i = 0; i < p.n; ++i)
        local_pot[0] += closest[i] = dist2_to(&p.x[i * d], coords.data(), d);
    if (int rc = total_of(local_pot, pot_per_rank, potential_sum); rc != 0)
        return rc;
    double potential = potential_sum[0];
    std::vector<double> rank_pot = pot_per_rank;  // each process's share of the potential

    const unsigned trials = 2 + static_cast<unsigned>(std::log(static_cast<double>(k)));
    std::vector<std::vector<double>> cand_closest(trials, std::vector<double>(p.n));
    for (uint32_t c = 1; c < k; ++c) {
        // The draws of every trial first (a trial's potential consumes no random number).
        std::vector<Candidate> draws(trials);
        for (Candidate &t : draws) {
            t.d2 = potential > 0;  // all-zero potential (duplicates only): uniform
            if (t.d2)
                t.r = rng.uniform() * potential;
            else
                t.index = rng.below(share.total);
        }
        // D^2 sampling: the process whose prefix of the potential passes r holds the point
        // and says which; rounding past the end falls on the last point of all.
        std::vector<uint64_t> idx(trials);
        std::vector<double> held(trials, 0.0);  // the holder's answer, zeros elsewhere
        std::vector<bool> by_holder(trials, false);
        for (unsigned t = 0; t < trials; ++t) {
            if (!draws[t].d2) {
                idx[t] = draws[t].index;
                continue;
            }
            double prefix = 0;
            int holder = -1;
            for (int r = 0; r < ranks && holder < 0; ++r) {
                if (rank_pot[static_cast<size_t>(r)] > 0 && prefix + rank_pot[static_cast<size_t>(r)] > draws[t].r)
                    holder = r;
                else
                    prefix += rank_pot[static_cast<size_t>(r)];
            }
            if (holder < 0) {
                idx[t] = share.total - 1;
                continue;
            }
            by_holder[t] = true;
            if (holder != me)
                continue;
            double acc = prefix;
            uint64_t cand = p.n - 1;
            for (uint64_t i = 0; i < p.n; ++i) {
                acc += closest[i];
                if (acc > draws[t].r) {
                    cand = i;
                    break;
                }
            }
            held[t] = static_cast<double>(share.offset + cand);  // exact below 2^53 points
        }
        if (int rc = resolve(held); rc != 0)
            return rc;
        for (unsigned t = 0; t < trials; ++t)
            if (by_holder[t])
                idx[t] = static_cast<uint64_t>(held[t]);
        if (int rc = fetch(idx, coords); rc != 0)
            return rc;
        std::vector<double> pots(trials, 0.0);
        for (unsigned t = 0; t < trials; ++t)
            for (uint64_t i = 0; i < p.n; ++i)
                pots[t] += cand_closest[t][i] = std::min(closest[i], dist2_to(&p.x[i * d], &coords[t * d], d));
        std::vector<double> per_rank, sums;
        if (int rc = total_of(pots, per_rank, sums); rc != 0)
            return rc;
        unsigned best = 0;
        double best_potential = std::numeric_limits<double>::infinity();
        for (unsigned t = 0; t < trials; ++t)
            if (sums[t] < best_potential) {
                best_potential = sums[t];
                best = t;
            }
        s.centroids.insert(s.centroids.end(), coords.begin() + best * d, coords.begin() + (best + 1) * d);
        closest.swap(cand_closest[best]);
        potential = best_potential;
        for (int r = 0; r < ranks; ++r)
            rank_pot[static_cast<size_t>(r)] = per_rank[static_cast<size_t>(r) * trials + best];
    }
    s.rng_state = rng.state;
    return 0;
}

IterationState initial_state(const Points &p, uint32_t k, uint64_t seed)
{
    SingleProcess single;
    IterationState s;
    initial_state(whole(p), k, seed, single, s);
    return s;
}

int run_lloyd(const PointShare &share, const LloydSettings &settings, IterationState &state, const AssignPass &assign,
              const IterationHook &hook, LloydResult &result, Collective &comm)
{
    const Points &p = share.local;
    const uint32_t k = settings.k, d = p.d;
    double tol_abs = 0;
    if (int rc = absolute_tolerance(share, settings.tol, comm, tol_abs); rc != 0)
        return rc;
    std::vector<int32_t> labels(p.n, -1), previous;
    std::vector<double> totals(partial_size(k, d));
    result.passes = 0;
    for (;;) {
        previous.swap(labels);
        labels.assign(p.n, -1);
        if (int rc = assign(state.centroids, labels, totals); rc != 0)
            return rc;
        // The labels changed are counted after the sums, in the same exchange: every
        // process takes the same convergence decision.
        uint64_t changed = 0;
        for (uint64_t i = 0; i < p.n; ++i)
            changed += labels[i] != previous[i];
        totals.push_back(static_cast<double>(changed));  // exact below 2^53
        if (int rc = comm.sum(totals); rc != 0)
            return rc;
        state.changed = static_cast<uint64_t>(totals.back());
        totals.pop_back();
        ++result.passes;
        state.inertia = totals[partial_size(k, d) - 1];
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

int run_lloyd(const Points &p, const LloydSettings &settings, IterationState &state, const AssignPass &assign,
              const IterationHook &hook, LloydResult &result)
{
    SingleProcess single;
    return run_lloyd(whole(p), settings, state, assign, hook, result, single);
}

int reference_kmeans(const PointShare &share, const LloydSettings &settings, uint64_t seed, IterationState &state,
                     LloydResult &result, Collective &comm)
{
    const Points &p = share.local;
    if (int rc = initial_state(share, settings.k, seed, comm, state); rc != 0)
        return rc;
    AssignPass serial = [&](const std::vector<double> &c, std::vector<int32_t> &labels, std::vector<double> &totals) {
        assign_block(p.x.data(), p.n, c.data(), settings.k, p.d, labels.data(), totals.data(), 1);
        return 0;
    };
    return run_lloyd(share, settings, state, serial, nullptr, result, comm);
}

int reference_kmeans(const Points &p, const LloydSettings &settings, uint64_t seed, IterationState &state,
                     LloydResult &result)
{
    SingleProcess single;
    return reference_kmeans(whole(p), settings, seed, state, result, single);
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
