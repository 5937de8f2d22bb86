// SPDX-License-Identifier: LGPL-2.1-or-later
/* The GRN criterion function and the subset enumeration, written once in the subset of C
 * that C++, OpenCL C and CUDA all accept: the CPU codelet and the reference include this
 * header, the OpenCL program is built from its text (grn_score_cl.inc is generated from
 * it), and the CUDA file includes it with __device__ functions. Every device therefore
 * runs the same floating-point operations in the same order; with FMA contraction off
 * (-ffp-contract=off, OPENCL FP_CONTRACT OFF, __d*_rn in CUDA) the scores are
 * bit-identical.
 *
 * Criterion (Borelli et al. 2013, after Lopes, Martins & Cesar 2008, "Feature selection
 * environment for genomic applications", whose DimReduction software implements it as
 * the "no_obs" penalty): the mean conditional entropy of the target Y given the predictor
 * subset X, in base 3 (three expression levels), where a probability mass alpha is given
 * to each of the M = 3^k possible predictor configurations:
 *
 *   H(Y|X) = sum over observed x of (f_x + alpha) / (alpha M + s) * H(Y | X = x)
 *          + alpha (M - N) / (alpha M + s) * H(Y)
 *
 * f_x: samples with configuration x, N: configurations observed, s: samples. An unseen
 * configuration thus counts as one that predicts nothing (the target's own entropy H(Y)),
 * which penalises large subsets whose configurations the samples cannot cover.
 * With t = m ln m tabulated (grn_xlogx[m], m = 0..s, computed once on the host),
 * H(Y | X = x) = (t[f_x] - sum_y t[c_xy]) / (f_x ln 3). */
#ifndef HETPU_GRN_SCORE_H
#define HETPU_GRN_SCORE_H

#if defined(__OPENCL_VERSION__)
#define GRN_FN static inline
#define GRN_GLOBAL __global
typedef ulong grn_u64;
typedef uint grn_u32;
typedef uchar grn_u8;
#define GRN_ADD(a, b) ((a) + (b))
#define GRN_SUB(a, b) ((a) - (b))
#define GRN_MUL(a, b) ((a) * (b))
#define GRN_DIV(a, b) ((a) / (b))
#elif defined(__CUDACC__)
#include <stdint.h>
#define GRN_FN static __device__ inline
#define GRN_GLOBAL
typedef uint64_t grn_u64;
typedef uint32_t grn_u32;
typedef uint8_t grn_u8;
/* nvcc contracts a*b+c into FMA by default: round every operation separately. */
#define GRN_ADD(a, b) __dadd_rn((a), (b))
#define GRN_SUB(a, b) __dsub_rn((a), (b))
#define GRN_MUL(a, b) __dmul_rn((a), (b))
#define GRN_DIV(a, b) __ddiv_rn((a), (b))
#else
#include <stdint.h>
#define GRN_FN static inline
#define GRN_GLOBAL
typedef uint64_t grn_u64;
typedef uint32_t grn_u32;
typedef uint8_t grn_u8;
#define GRN_ADD(a, b) ((a) + (b))
#define GRN_SUB(a, b) ((a) - (b))
#define GRN_MUL(a, b) ((a) * (b))
#define GRN_DIV(a, b) ((a) / (b))
#endif

#define GRN_LEVELS 3
#define GRN_MAX_K 3
#define GRN_MAX_CONFIGS 27 /* 3^GRN_MAX_K */
#define GRN_LN3 1.0986122886681098

/* C(n, k) for k <= 3. */
GRN_FN grn_u64 grn_binom(grn_u64 n, grn_u32 k)
{
    if (k > n)
        return 0;
    if (k == 0)
        return 1;
    if (k == 1)
        return n;
    if (k == 2)
        return n * (n - 1) / 2;
    return n * (n - 1) / 2 * (n - 2) / 3;
}

/* The rank-th k-subset of {0..n-1} in lexicographic order, into c[0] < ... < c[k-1]. */
GRN_FN void grn_unrank(grn_u64 rank, grn_u32 n, grn_u32 k, grn_u32 *c)
{
    grn_u32 x = 0;
    for (grn_u32 i = 0; i < k; ++i) {
        for (;;) {
            grn_u64 below = grn_binom((grn_u64)(n - x - 1), k - i - 1);
            if (rank < below)
                break;
            rank -= below;
            ++x;
        }
        c[i] = x++;
    }
}

/* Next k-subset in lexicographic order (the caller never steps past the last one). */
GRN_FN void grn_next(grn_u32 *c, grn_u32 n, grn_u32 k)
{
    int i = (int)k - 1;
    while (i > 0 && c[i] == n - k + (grn_u32)i)
        --i;
    ++c[i];
    for (grn_u32 j = (grn_u32)i + 1; j < k; ++j)
        c[j] = c[j - 1] + 1;
}

/* Criterion from the configuration x target-level counts (counts[x * 3 + y]). hy is the
 * target's entropy H(Y) (base 3), alpha the penalty mass, s the number of samples
 * (pairs when a time lag is used). */
GRN_FN double grn_criterion(const int *counts, grn_u32 configs, grn_u32 s, GRN_GLOBAL const double *xlogx, double hy,
                            double alpha)
{
    const double denom = GRN_ADD(GRN_MUL(alpha, (double)configs), (double)s);
    double h = 0.0;
    grn_u32 observed = 0;
    for (grn_u32 x = 0; x < configs; ++x) {
        const int c0 = counts[x * 3], c1 = counts[x * 3 + 1], c2 = counts[x * 3 + 2];
        const int f = c0 + c1 + c2;
        if (f == 0)
            continue;
        ++observed;
        const double num = GRN_SUB(GRN_SUB(GRN_SUB(xlogx[f], xlogx[c0]), xlogx[c1]), xlogx[c2]);
        const double hx = GRN_DIV(num, GRN_MUL((double)f, GRN_LN3));
        h = GRN_ADD(h, GRN_MUL(GRN_DIV(GRN_ADD((double)f, alpha), denom), hx));
    }
    const double unseen = GRN_DIV(GRN_MUL(alpha, (double)(configs - observed)), denom);
    return GRN_ADD(h, GRN_MUL(unseen, hy));
}

/* Count configurations of subset c (k genes) against the target's levels. levels is
 * gene-major (gene g's samples at g * samples); predictors are read at sample j and the
 * target at j + lag, for j < pairs = samples - lag. */
GRN_FN void grn_count(GRN_GLOBAL const grn_u8 *levels, grn_u32 samples, grn_u32 lag, const grn_u32 *c, grn_u32 k,
                      grn_u32 target, int *counts)
{
    const grn_u32 configs = k == 1 ? 3u : k == 2 ? 9u : 27u;
    for (grn_u32 i = 0; i < configs * 3; ++i)
        counts[i] = 0;
    const grn_u32 pairs = samples - lag;
    GRN_GLOBAL const grn_u8 *y = levels + (grn_u64)target * samples + lag;
    GRN_GLOBAL const grn_u8 *p0 = levels + (grn_u64)c[0] * samples;
    GRN_GLOBAL const grn_u8 *p1 = levels + (grn_u64)c[k > 1 ? 1 : 0] * samples;
    GRN_GLOBAL const grn_u8 *p2 = levels + (grn_u64)c[k > 2 ? 2 : 0] * samples;
    for (grn_u32 j = 0; j < pairs; ++j) {
        grn_u32 x = p0[j];
        if (k > 1)
            x += 3u * p1[j];
        if (k > 2)
            x += 9u * p2[j];
        ++counts[x * 3 + y[j]];
    }
}

/* Lane g of lanes splits a block of count subsets into contiguous chunks. */
GRN_FN void grn_lane_range(grn_u64 count, grn_u32 lanes, grn_u32 g, grn_u64 *first, grn_u64 *n)
{
    const grn_u64 chunk = (count + lanes - 1) / lanes;
    const grn_u64 start = chunk * g;
    *first = start;
    *n = start >= count ? 0 : (count - start < chunk ? count - start : chunk);
}

/* Is gene g one of the k subset members? */
GRN_FN int grn_in_subset(const grn_u32 *c, grn_u32 k, grn_u32 g)
{
    for (grn_u32 i = 0; i < k; ++i)
        if (c[i] == g)
            return 1;
    return 0;
}

/* One lane of a block: subsets [first, first + count) of the block, scored against one
 * target, best kept as (score, rank) with ties going to the lower rank. Used by the
 * OpenCL and CUDA kernels (one work-item per target and lane) and by the reference. */
GRN_FN void grn_lane_best(GRN_GLOBAL const grn_u8 *levels, grn_u32 genes, grn_u32 samples, grn_u32 lag, grn_u32 k,
                          GRN_GLOBAL const double *xlogx, double hy, double alpha, grn_u32 target, grn_u64 first,
                          grn_u64 count, double *best_score, double *best_rank)
{
    int counts[GRN_MAX_CONFIGS * 3];
    grn_u32 c[GRN_MAX_K];
    const grn_u32 configs = k == 1 ? 3u : k == 2 ? 9u : 27u;
    *best_score = -1.0; /* none yet */
    *best_rank = -1.0;
    if (count == 0)
        return;
    grn_unrank(first, genes, k, c);
    for (grn_u64 r = 0; r < count; ++r) {
        if (r > 0)
            grn_next(c, genes, k);
        if (grn_in_subset(c, k, target))
            continue;
        grn_count(levels, samples, lag, c, k, target, counts);
        const double h = grn_criterion(counts, configs, samples - lag, xlogx, hy, alpha);
        if (*best_rank < 0.0 || h < *best_score) {
            *best_score = h;
            *best_rank = (double)(first + r);
        }
    }
}

#endif
