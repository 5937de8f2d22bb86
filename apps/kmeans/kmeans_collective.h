// SPDX-License-Identifier: LGPL-2.1-or-later
// What a k-means run whose points are split across processes (the ranks of an MPI launch,
// each holding a contiguous share) needs from the others: an all-gather, and on top of it
// element-wise sums added in rank order, so that every process gets the same bits and
// takes the same decisions. Pure C++: the MPI version lives in kmeans_mpi_collective.h,
// and a single process is SingleProcess.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "apps/kmeans/kmeans_data.h"

namespace hetpu::kmeans {

class Collective {
public:
    virtual ~Collective() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Every process's `bytes` bytes at mine, in rank order, into all (size() x bytes), on
    // every process. 0 or -errno (the same on every process).
    virtual int all_gather(const void *mine, size_t bytes, std::vector<unsigned char> &all) = 0;

    // v becomes, on every process, the element-wise sum over processes, added in rank
    // order (all processes pass the same length). 0 or -errno.
    int sum(std::vector<double> &v)
    {
        if (size() == 1)
            return 0;
        std::vector<unsigned char> all;
        if (int rc = all_gather(v.data(), v.size() * sizeof(double), all); rc != 0)
            return rc;
        std::vector<double> part(v.size());
        for (int r = 0; r < size(); ++r) {
            std::memcpy(part.data(), all.data() + static_cast<size_t>(r) * v.size() * sizeof(double),
                        v.size() * sizeof(double));
            for (size_t i = 0; i < v.size(); ++i)
                v[i] = r == 0 ? part[i] : v[i] + part[i];
        }
        return 0;
    }

    // Every process's value, in rank order.
    template <typename T> int gather_values(const T &mine, std::vector<T> &all)
    {
        std::vector<unsigned char> bytes;
        if (int rc = all_gather(&mine, sizeof mine, bytes); rc != 0)
            return rc;
        all.resize(static_cast<size_t>(size()));
        std::memcpy(all.data(), bytes.data(), all.size() * sizeof(T));
        return 0;
    }
};

class SingleProcess final : public Collective {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int all_gather(const void *mine, size_t bytes, std::vector<unsigned char> &all) override
    {
        const auto *p = static_cast<const unsigned char *>(mine);
        all.assign(p, p + bytes);
        return 0;
    }
};

// The points this process holds: points [offset, offset + local.n) of `total`.
struct PointShare {
    const Points &local;
    uint64_t offset = 0;
    uint64_t total = 0;
};

inline PointShare whole(const Points &p) { return PointShare{p, 0, p.n}; }

}  // namespace hetpu::kmeans
