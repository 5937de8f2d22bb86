// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_columns.h"

#include <algorithm>
#include <limits>
#include <new>

#include "apps/common/splitmix.h"

namespace hetpu::matmul {

template <typename T>
ColumnStore<T>::ColumnStore(uint64_t m_, uint64_t n_, uint64_t k_, uint64_t seed_)
    : m(m_), n(n_), k(k_), seed(seed_), a(m_ * k_)
{
    // The same streams as Problem: A from seed * 2 + 1, B from seed * 2 + 2.
    apps::SplitMix64 rng{seed * 2 + 1};
    for (T &x : a)
        x = static_cast<T>(rng.symmetric());
}

template <typename T> void ColumnStore<T>::hold(uint64_t offset, uint64_t count, bool generate)
{
    auto same = chunks_.find(offset);
    if (same != chunks_.end() && same->second.count == count) {
        std::fill(same->second.c.begin(), same->second.c.end(), std::numeric_limits<T>::quiet_NaN());
        return;
    }
    for (auto it = chunks_.begin(); it != chunks_.end();) {
        const bool overlaps = it->first < offset + count && offset < it->first + it->second.count;
        it = overlaps ? chunks_.erase(it) : std::next(it);
    }
    if (limit_ > 0 && held_bytes() + count * (k + m) * sizeof(T) > limit_)
        throw std::bad_alloc();
    Chunk chunk;
    chunk.count = count;
    chunk.b.resize(count * k);
    chunk.c.assign(count * m, std::numeric_limits<T>::quiet_NaN());
    if (generate) {
        apps::SplitMix64 rng = apps::SplitMix64::at(seed * 2 + 2, offset * k);
        for (T &x : chunk.b)
            x = static_cast<T>(rng.symmetric());
    }
    chunks_.emplace(offset, std::move(chunk));
}

template <typename T> void ColumnStore<T>::release(uint64_t offset, uint64_t count)
{
    auto it = chunks_.find(offset);
    if (it != chunks_.end() && it->second.count == count)
        chunks_.erase(it);
}

template <typename T> const typename ColumnStore<T>::Chunk *ColumnStore<T>::find(uint64_t j, uint64_t &first) const
{
    auto it = chunks_.upper_bound(j);
    if (it == chunks_.begin())
        return nullptr;
    --it;
    if (j >= it->first + it->second.count)
        return nullptr;
    first = it->first;
    return &it->second;
}

template <typename T> T *ColumnStore<T>::b_col(uint64_t j)
{
    uint64_t first = 0;
    const Chunk *c = find(j, first);
    return c ? const_cast<T *>(c->b.data()) + (j - first) * k : nullptr;
}

template <typename T> T *ColumnStore<T>::c_col(uint64_t j)
{
    uint64_t first = 0;
    const Chunk *c = find(j, first);
    return c ? const_cast<T *>(c->c.data()) + (j - first) * m : nullptr;
}

template <typename T> void ColumnStore<T>::reset_c()
{
    for (auto &[offset, chunk] : chunks_)
        std::fill(chunk.c.begin(), chunk.c.end(), std::numeric_limits<T>::quiet_NaN());
}

template <typename T> uint64_t ColumnStore<T>::held_columns() const
{
    uint64_t sum = 0;
    for (const auto &[offset, chunk] : chunks_)
        sum += chunk.count;
    return sum;
}

template <typename T>
VerifyResult ColumnStore<T>::verify(uint64_t first, uint64_t count, const VerifyOptions &options) const
{
    ColumnsView<T> v;
    v.m = m;
    v.k = k;
    v.seed = seed;
    v.a = a.data();
    v.b_col = [this](uint64_t j) -> const T * {
        uint64_t start = 0;
        const Chunk *c = find(j, start);
        return c ? c->b.data() + (j - start) * k : nullptr;
    };
    v.c_col = [this](uint64_t j) -> const T * {
        uint64_t start = 0;
        const Chunk *c = find(j, start);
        return c ? c->c.data() + (j - start) * m : nullptr;
    };
    return verify_columns(v, first, count, options);
}

template class ColumnStore<float>;
template class ColumnStore<double>;

}  // namespace hetpu::matmul
