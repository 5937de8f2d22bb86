// SPDX-License-Identifier: LGPL-2.1-or-later
// Points of a k-means run: reading (CSV/TSV text, or hetpu's binary format for large runs),
// writing, and a generator of Gaussian blobs with known centres. Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetpu::kmeans {

struct Points {
    uint64_t n = 0;         // points
    uint32_t d = 0;         // dimensions
    std::vector<double> x;  // row-major: point i is x[i*d .. i*d+d)
};

// Binary format: the 8 bytes "HKMEANS1", n and d as little-endian uint64, then n*d
// little-endian IEEE doubles, point after point. The file size must match exactly.
constexpr char kBinaryMagic[9] = "HKMEANS1";

// Reads the binary format when the file starts with the magic, text otherwise (one point
// per line, comma/tab/blank separated, an optional header line, '#' comments).
// Errors name the file and line: ragged rows, non-numeric values, empty files.
bool read_points(const std::string &path, Points &out, std::string &error);

// Writes text (CSV with a header x0,x1,...) unless the name ends in ".bin". The file is
// written to a temporary name and renamed, so a failed write leaves nothing behind.
bool write_points(const std::string &path, const Points &p, std::string &error);

// Write rows of doubles (k x d centroids, for instance) as CSV with a header.
bool write_matrix_csv(const std::string &path, const std::vector<double> &values, uint64_t rows, uint32_t cols,
                      const std::string &column_prefix, std::string &error);

// Write one integer per line (cluster of each point).
bool write_labels(const std::string &path, const std::vector<int32_t> &labels, std::string &error);

struct Blobs {
    Points points;
    std::vector<double> centres;  // k x d
};

// n points in d dimensions around k centres drawn uniformly in [-50, 50]^d at least
// 10 * sigma apart (when possible); point i belongs to blob i % k and is its centre plus
// N(0, sigma^2) noise per coordinate. Deterministic in seed.
Blobs generate_blobs(uint64_t n, uint32_t d, uint32_t k, double sigma, uint64_t seed);

// Only points [offset, offset + count) of generate_blobs(n, ...) (a rank's share), with the
// same bits; the centres in full.
Blobs generate_blobs(uint64_t n, uint32_t d, uint32_t k, double sigma, uint64_t seed, uint64_t offset, uint64_t count);

// The size of a points file, every check of read_points() made but no point kept (binary:
// the header and the file's size; text: parsed whole).
bool scan_points(const std::string &path, uint64_t &n, uint32_t &d, std::string &error);

// Points [offset, offset + count) of a points file (a rank's share): of the binary format
// only those bytes are read; a text file is parsed whole and the rest dropped, so data
// larger than one process's memory must be in the binary format.
bool read_points_share(const std::string &path, uint64_t offset, uint64_t count, Points &out, std::string &error);

}  // namespace hetpu::kmeans
