// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "apps/common/output_file.h"
#include "apps/grn/grn_score.h"

namespace hetpu::grn {

SearchInput make_search_input(std::vector<uint8_t> levels, uint32_t genes, uint32_t samples, uint32_t lag, uint32_t k,
                              double alpha)
{
    SearchInput in;
    in.genes = genes;
    in.samples = samples;
    in.lag = lag;
    in.k = k;
    in.alpha = alpha;
    in.levels = std::move(levels);
    const uint32_t pairs = samples - lag;
    in.xlogx.resize(pairs + 1);
    for (uint32_t m = 0; m <= pairs; ++m)
        in.xlogx[m] = m ? m * std::log(static_cast<double>(m)) : 0.0;
    in.hy.resize(genes);
    for (uint32_t g = 0; g < genes; ++g) {
        int n[3] = {0, 0, 0};
        for (uint32_t j = 0; j < pairs; ++j)
            ++n[in.levels[static_cast<uint64_t>(g) * samples + lag + j]];
        const double num = in.xlogx[pairs] - in.xlogx[n[0]] - in.xlogx[n[1]] - in.xlogx[n[2]];
        in.hy[g] = num / (static_cast<double>(pairs) * GRN_LN3);
    }
    return in;
}

uint64_t subset_count(uint32_t genes, uint32_t k) { return grn_binom(genes, k); }

std::vector<uint32_t> subset_of(uint64_t rank, uint32_t genes, uint32_t k)
{
    grn_u32 c[GRN_MAX_K];
    grn_unrank(rank, genes, k, c);
    return std::vector<uint32_t>(c, c + k);
}

void score_block_cpu(const BlockArgs &a, const uint8_t *levels, const double *xlogx, const double *hy, double *out,
                     int threads)
{
    const uint32_t genes = a.genes, lanes = a.lanes, k = a.k;
    const uint32_t pairs = a.samples - a.lag;
    const uint32_t configs = k == 1 ? 3u : k == 2 ? 9u : 27u;
    double *scores = out, *ranks = out + static_cast<uint64_t>(genes) * lanes;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        std::vector<uint8_t> config(pairs);
        int counts[GRN_MAX_CONFIGS * 3];
#pragma omp for schedule(dynamic, 1)
        for (int64_t lane = 0; lane < static_cast<int64_t>(lanes); ++lane) {
            grn_u64 first, count;
            grn_lane_range(a.count, lanes, static_cast<grn_u32>(lane), &first, &count);
            for (uint32_t t = 0; t < genes; ++t) {
                scores[t * lanes + lane] = -1.0;
                ranks[t * lanes + lane] = -1.0;
            }
            if (count == 0)
                continue;
            grn_u32 c[GRN_MAX_K];
            grn_unrank(a.offset + first, genes, k, c);
            for (grn_u64 r = 0; r < count; ++r) {
                if (r > 0)
                    grn_next(c, genes, k);
                // The subset's configuration per sample, once for all targets.
                for (uint32_t j = 0; j < pairs; ++j) {
                    uint32_t x = levels[static_cast<uint64_t>(c[0]) * a.samples + j];
                    if (k > 1)
                        x += 3u * levels[static_cast<uint64_t>(c[1]) * a.samples + j];
                    if (k > 2)
                        x += 9u * levels[static_cast<uint64_t>(c[2]) * a.samples + j];
                    config[j] = static_cast<uint8_t>(x);
                }
                const double rank = static_cast<double>(a.offset + first + r);
                for (uint32_t t = 0; t < genes; ++t) {
                    if (grn_in_subset(c, k, t))
                        continue;
                    std::fill(counts, counts + configs * 3, 0);
                    const uint8_t *y = levels + static_cast<uint64_t>(t) * a.samples + a.lag;
                    for (uint32_t j = 0; j < pairs; ++j)
                        ++counts[config[j] * 3 + y[j]];
                    const double h = grn_criterion(counts, configs, pairs, xlogx, hy[t], a.alpha);
                    double &best = scores[t * lanes + lane];
                    double &best_rank = ranks[t * lanes + lane];
                    if (best_rank < 0.0 || h < best) {
                        best = h;
                        best_rank = rank;
                    }
                }
            }
        }
    }
}

void merge_block(std::vector<Best> &best, const double *out, uint32_t genes, uint32_t lanes)
{
    const double *scores = out, *ranks = out + static_cast<uint64_t>(genes) * lanes;
    for (uint32_t t = 0; t < genes; ++t)
        for (uint32_t g = 0; g < lanes; ++g) {
            const double rank = ranks[t * lanes + g];
            if (rank < 0)
                continue;
            const double score = scores[t * lanes + g];
            Best &b = best[t];
            const int64_t r = static_cast<int64_t>(rank);
            if (b.rank < 0 || score < b.score || (score == b.score && r < b.rank)) {
                b.score = score;
                b.rank = r;
            }
        }
}

std::vector<Best> reference_search(const SearchInput &in)
{
    std::vector<Best> best(in.genes);
    const uint64_t total = subset_count(in.genes, in.k);
    for (uint32_t t = 0; t < in.genes; ++t) {
        double score, rank;
        grn_lane_best(in.levels.data(), in.genes, in.samples, in.lag, in.k, in.xlogx.data(), in.hy[t], in.alpha, t, 0,
                      total, &score, &rank);
        best[t].score = score;
        best[t].rank = static_cast<int64_t>(rank);
    }
    return best;
}

uint32_t drop_constant_targets(std::vector<Best> &best, const std::vector<double> &hy)
{
    uint32_t dropped = 0;
    for (size_t t = 0; t < best.size() && t < hy.size(); ++t)
        if (hy[t] == 0.0 && best[t].rank >= 0) {
            best[t] = Best{};
            ++dropped;
        }
    return dropped;
}

std::vector<Edge> edges_from_best(const std::vector<Best> &best, uint32_t genes, uint32_t k, double max_score)
{
    std::vector<Edge> edges;
    for (uint32_t t = 0; t < best.size(); ++t) {
        if (best[t].rank < 0 || best[t].score > max_score)
            continue;
        for (uint32_t r : subset_of(static_cast<uint64_t>(best[t].rank), genes, k))
            edges.push_back({r, t});
    }
    std::sort(edges.begin(), edges.end());
    return edges;
}

Recovery compare_edges(const std::vector<Edge> &inferred, const std::vector<Edge> &planted)
{
    Recovery r;
    r.inferred = inferred.size();
    r.planted = planted.size();
    for (const Edge &e : inferred)
        r.true_positives += std::binary_search(planted.begin(), planted.end(), e);
    r.precision = r.inferred ? static_cast<double>(r.true_positives) / r.inferred : 0;
    r.recall = r.planted ? static_cast<double>(r.true_positives) / r.planted : 0;
    return r;
}

bool write_inferred(const std::string &path, const std::vector<Best> &best, const std::vector<std::string> &genes,
                    uint32_t k, double max_score, std::string &error)
{
    std::string text = "regulator\ttarget\tscore\tpredictors\n";
    char buf[48];
    for (uint32_t t = 0; t < best.size(); ++t) {
        if (best[t].rank < 0 || best[t].score > max_score)
            continue;
        std::vector<uint32_t> subset =
            subset_of(static_cast<uint64_t>(best[t].rank), static_cast<uint32_t>(genes.size()), k);
        std::string names;
        for (uint32_t g : subset)
            names += (names.empty() ? "" : ",") + genes[g];
        std::snprintf(buf, sizeof buf, "%.17g", best[t].score);
        for (uint32_t g : subset)
            text += genes[g] + "\t" + genes[t] + "\t" + buf + "\t" + names + "\n";
    }
    return apps::write_file_atomically(path, text, error);
}

}  // namespace hetpu::grn
