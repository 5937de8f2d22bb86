// SPDX-License-Identifier: LGPL-2.1-or-later
// The matrices of a matmul run spread over MPI ranks: every rank holds all of A (the
// shared input of every block) but only the columns of B and C it is given (its share,
// and ranges borrowed from other ranks while it computes them). Pure C++ (no StarPU).
//
// B's columns are generated from the seed exactly as Problem generates the whole matrix,
// so the product is the same whatever the split; verification checks the held columns.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "apps/matmul/matmul_problem.h"

namespace hetpu::matmul {

template <typename T> class ColumnStore {
public:
    ColumnStore(uint64_t m, uint64_t n, uint64_t k, uint64_t seed);

    // Columns [offset, offset + count) of B and C: allocated, B generated when `generate`
    // (the rank's share) and left for the owner's data otherwise (a borrowed range), C
    // filled with NaN. Holding exactly a range already held keeps it (a new repetition);
    // ranges overlapping it are dropped first. Throws std::bad_alloc.
    void hold(uint64_t offset, uint64_t count, bool generate);
    void release(uint64_t offset, uint64_t count);
    // hold() throws std::bad_alloc rather than hold more than `bytes` of columns (0: no limit).
    void limit_bytes(uint64_t bytes) { limit_ = bytes; }
    uint64_t held_bytes() const { return held_columns() * (k + m) * sizeof(T); }

    // Column j of B or C (k or m entries), or nullptr when this rank does not hold it.
    T *b_col(uint64_t j);
    T *c_col(uint64_t j);

    void reset_c();
    uint64_t held_columns() const;

    // Verify C = A x B over the columns held in [first, first + count) (every held column
    // scanned for NaN and sampled as verify() does; columns not held count as bad).
    VerifyResult verify(uint64_t first, uint64_t count, const VerifyOptions &options = VerifyOptions()) const;

    uint64_t m, n, k, seed;
    std::vector<T> a;

private:
    struct Chunk {
        uint64_t count = 0;
        std::vector<T> b, c;
    };
    const Chunk *find(uint64_t j, uint64_t &first) const;
    std::map<uint64_t, Chunk> chunks_;  // by first column
    uint64_t limit_ = 0;
};

extern template class ColumnStore<float>;
extern template class ColumnStore<double>;

}  // namespace hetpu::matmul
