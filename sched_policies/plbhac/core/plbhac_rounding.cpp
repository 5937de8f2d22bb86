// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_rounding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace hetpu {

std::vector<std::int64_t> round_to_granule(const std::vector<double> &shares, std::int64_t W, std::int64_t granule)
{
    if (granule < 1)
        throw std::invalid_argument("round_to_granule: granule must be >= 1");
    if (W < 0)
        throw std::invalid_argument("round_to_granule: workload must be >= 0");
    if (shares.empty())
        throw std::invalid_argument("round_to_granule: no share");
    double sum = 0;
    for (double s : shares) {
        if (!std::isfinite(s) || s < 0)
            throw std::invalid_argument("round_to_granule: shares must be finite and >= 0");
        sum += s;
    }

    const std::size_t n = shares.size();
    std::vector<std::int64_t> blocks(n, 0);
    if (W == 0)
        return blocks;
    if (!(sum > 0)) {
        blocks[0] = W;
        return blocks;
    }

    const std::int64_t G = W / granule;  // whole granules to hand out
    const std::int64_t tail = W % granule;
    // Scale to granules; the shares come from a solver and sum to W only to its tolerance.
    const double scale = (static_cast<double>(W) / static_cast<double>(granule)) / sum;

    std::vector<std::int64_t> units(n, 0);
    std::vector<double> frac(n, 0.0);
    std::int64_t given = 0;
    for (std::size_t p = 0; p < n; ++p) {
        const double q = shares[p] * scale;
        const double f = std::floor(q);
        units[p] = static_cast<std::int64_t>(f);
        frac[p] = q - f;
        given += units[p];
    }

    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (frac[a] != frac[b])
            return frac[a] > frac[b];
        return shares[a] > shares[b];
    });
    // Mathematically 0 <= G - given < (number of non-zero fractional parts); floating point
    // can push the floors one over or the deficit one past that, so both directions are
    // handled and only PUs with a non-zero share ever gain.
    std::int64_t deficit = G - given;
    for (std::size_t i = 0; deficit > 0; i = (i + 1) % n) {
        if (shares[order[i]] > 0) {
            ++units[order[i]];
            --deficit;
        }
    }
    for (std::size_t i = n; deficit < 0; i = (i == 0 ? n : i) - 1) {
        if (i < n && units[order[i]] > 0) {
            --units[order[i]];
            ++deficit;
        }
    }

    std::size_t largest = 0;
    for (std::size_t p = 0; p < n; ++p) {
        blocks[p] = units[p] * granule;
        if (blocks[p] > blocks[largest] || (blocks[p] == blocks[largest] && shares[p] > shares[largest]))
            largest = p;
    }
    blocks[largest] += tail;
    return blocks;
}

}  // namespace hetpu
