// SPDX-License-Identifier: LGPL-2.1-or-later
// The exhaustive search of the grn app: for every target gene, every predictor subset of
// cardinality k scored by the criterion of grn_score.h; the lowest score (ties: lowest
// subset rank) wins. Pure C++. The divisible elements are the C(genes, k) subsets in
// lexicographic rank order; a block of subsets yields, per target and lane, the best
// (score, rank) it saw, and merging blocks in any order gives the same result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/grn/grn_data.h"

namespace hetpu::grn {

// A block's result has genes x lanes (score, rank) pairs: independent slices of the block
// that a GPU scores in parallel (and the CPU codelet's OpenMP threads share out).
constexpr uint32_t kLanes = 32;

// Lanes per block for a problem: kLanes, fewer for very many genes so that a block's
// output stays near 2 MiB (genes x lanes >= 131072 still keeps a GPU busy).
inline uint32_t lanes_for(uint32_t genes)
{
    const uint32_t fit = genes ? 131072u / genes : kLanes;
    return fit >= kLanes ? kLanes : fit > 0 ? fit : 1;
}

// Codelet argument, shared by every device (plain data, copied by StarPU).
struct BlockArgs {
    uint32_t genes, samples, lag, k, lanes;
    double alpha;
    uint64_t offset, count;  // the block's subsets: ranks [offset, offset + count)
};

// Per-block output layout: scores[genes * lanes], then ranks[genes * lanes] (as doubles,
// exact below 2^53; -1: the lane scored nothing for that target).
inline uint64_t block_output_size(uint32_t genes, uint32_t lanes) { return 2ull * genes * lanes; }

struct SearchInput {
    uint32_t genes = 0, samples = 0, lag = 0, k = 2;
    double alpha = 1.0;
    std::vector<uint8_t> levels;  // gene-major, values 0..2
    std::vector<double> xlogx;    // m ln m, m = 0..pairs
    std::vector<double> hy;       // H(Y) per target (base 3), over the lagged target samples
};

// Tables for the search; lag < samples.
SearchInput make_search_input(std::vector<uint8_t> levels, uint32_t genes, uint32_t samples, uint32_t lag, uint32_t k,
                              double alpha);

uint64_t subset_count(uint32_t genes, uint32_t k);
std::vector<uint32_t> subset_of(uint64_t rank, uint32_t genes, uint32_t k);

// The CPU codelet's work: score subsets [a.offset, a.offset + a.count) against every
// target into out (block_output_size). Each subset's configurations are computed once
// and reused for all targets; lanes are split among `threads` OpenMP threads.
void score_block_cpu(const BlockArgs &a, const uint8_t *levels, const double *xlogx, const double *hy, double *out,
                     int threads);

struct Best {
    double score = -1;  // -1: none
    int64_t rank = -1;
};

// Fold another best of the same target in (the lower score, then the lower subset rank).
inline void merge_best(Best &into, const Best &other)
{
    if (other.rank >= 0 &&
        (into.rank < 0 || other.score < into.score || (other.score == into.score && other.rank < into.rank)))
        into = other;
}

// Fold one block's output into best (size genes).
void merge_block(std::vector<Best> &best, const double *out, uint32_t genes, uint32_t lanes);

// The straightforward reference: one target at a time, every subset in order, through
// grn_lane_best (the kernels' own per-lane routine).
std::vector<Best> reference_search(const SearchInput &in);

// A target whose level never varies (H(Y) = 0) is predicted perfectly by every subset: it
// has no regulators to infer. Clears those targets' best (rank -1); returns how many.
uint32_t drop_constant_targets(std::vector<Best> &best, const std::vector<double> &hy);

// Edges predictor -> target from every target whose best score is at most max_score.
std::vector<Edge> edges_from_best(const std::vector<Best> &best, uint32_t genes, uint32_t k, double max_score);

struct Recovery {
    uint64_t inferred = 0, planted = 0, true_positives = 0;
    double precision = 0, recall = 0;  // 0 when undefined
};
Recovery compare_edges(const std::vector<Edge> &inferred, const std::vector<Edge> &planted);

// TSV of the inferred edges: regulator, target, score, the target's whole predictor set.
bool write_inferred(const std::string &path, const std::vector<Best> &best, const std::vector<std::string> &genes,
                    uint32_t k, double max_score, std::string &error);

}  // namespace hetpu::grn
