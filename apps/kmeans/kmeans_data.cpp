// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_data.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "apps/common/output_file.h"
#include "apps/common/splitmix.h"
#include "common/text_table.h"

namespace hetpu::kmeans {

namespace {

bool ends_with(const std::string &s, const char *suffix)
{
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

uint64_t read_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

void put_le64(std::string &out, uint64_t v)
{
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

bool read_points(const std::string &path, Points &out, std::string &error)
{
    std::string data;
    if (!apps::read_file(path, data, error))
        return false;
    if (data.size() >= 8 && data.compare(0, 8, kBinaryMagic) == 0) {
        if (data.size() < 24) {
            error = path + ": binary header truncated (" + std::to_string(data.size()) + " bytes): the file is damaged";
            return false;
        }
        const auto *p = reinterpret_cast<const unsigned char *>(data.data());
        const uint64_t n = read_le64(p + 8), d = read_le64(p + 16);
        if (n == 0 || d == 0 || d > 1u << 20 || n > (UINT64_MAX / 8) / d) {
            error = path + ": binary header says n = " + std::to_string(n) + ", d = " + std::to_string(d) +
                    ": both must be positive (d at most 1048576)";
            return false;
        }
        const uint64_t expect = 24 + n * d * 8;
        if (data.size() != expect) {
            error = path + ": binary file has " + std::to_string(data.size()) + " bytes but n = " + std::to_string(n) +
                    ", d = " + std::to_string(d) + " need " + std::to_string(expect) +
                    ": the file is truncated or damaged";
            return false;
        }
        Points pts;
        pts.n = n;
        pts.d = static_cast<uint32_t>(d);
        pts.x.resize(n * d);
        for (uint64_t i = 0; i < n * d; ++i) {
            uint64_t bits = read_le64(p + 24 + 8 * i);
            double v;
            std::memcpy(&v, &bits, 8);
            if (!std::isfinite(v)) {
                error = path + ": value " + std::to_string(i % d) + " of point " + std::to_string(i / d) +
                        " is not finite: the data must be finite numbers";
                return false;
            }
            pts.x[i] = v;
        }
        out = std::move(pts);
        return true;
    }
    apps::Table t;
    if (!apps::parse_table(data, path, apps::TableFormat{}, t, error))
        return false;
    out.n = t.rows;
    out.d = static_cast<uint32_t>(t.cols);
    out.x = std::move(t.values);
    return true;
}

bool write_points(const std::string &path, const Points &p, std::string &error)
{
    std::string data;
    if (ends_with(path, ".bin")) {
        data.append(kBinaryMagic, 8);
        put_le64(data, p.n);
        put_le64(data, p.d);
        for (double v : p.x) {
            uint64_t bits;
            std::memcpy(&bits, &v, 8);
            put_le64(data, bits);
        }
        return apps::write_file_atomically(path, data, error);
    }
    char buf[40];
    for (uint32_t j = 0; j < p.d; ++j)
        data += (j ? ",x" : "x") + std::to_string(j);
    data += '\n';
    for (uint64_t i = 0; i < p.n; ++i) {
        for (uint32_t j = 0; j < p.d; ++j) {
            std::snprintf(buf, sizeof buf, "%s%.17g", j ? "," : "", p.x[i * p.d + j]);
            data += buf;
        }
        data += '\n';
    }
    return apps::write_file_atomically(path, data, error);
}

bool write_matrix_csv(const std::string &path, const std::vector<double> &values, uint64_t rows, uint32_t cols,
                      const std::string &column_prefix, std::string &error)
{
    std::string data;
    char buf[40];
    for (uint32_t j = 0; j < cols; ++j)
        data += (j ? "," : "") + column_prefix + std::to_string(j);
    data += '\n';
    for (uint64_t i = 0; i < rows; ++i) {
        for (uint32_t j = 0; j < cols; ++j) {
            std::snprintf(buf, sizeof buf, "%s%.17g", j ? "," : "", values[i * cols + j]);
            data += buf;
        }
        data += '\n';
    }
    return apps::write_file_atomically(path, data, error);
}

bool write_labels(const std::string &path, const std::vector<int32_t> &labels, std::string &error)
{
    std::string data = "cluster\n";
    for (int32_t l : labels)
        data += std::to_string(l) + '\n';
    return apps::write_file_atomically(path, data, error);
}

Blobs generate_blobs(uint64_t n, uint32_t d, uint32_t k, double sigma, uint64_t seed)
{
    apps::SplitMix64 rng{seed * 0x9e3779b97f4a7c15ull + 0x6b6d65616e73ull};
    Blobs b;
    b.centres.resize(static_cast<size_t>(k) * d);
    const double min_sep2 = 100.0 * sigma * sigma;
    for (uint32_t c = 0; c < k; ++c) {
        for (int attempt = 0; attempt < 1000; ++attempt) {
            for (uint32_t j = 0; j < d; ++j)
                b.centres[c * d + j] = -50.0 + 100.0 * rng.uniform();
            bool far = true;
            for (uint32_t o = 0; o < c && far; ++o) {
                double s = 0;
                for (uint32_t j = 0; j < d; ++j) {
                    double diff = b.centres[c * d + j] - b.centres[o * d + j];
                    s += diff * diff;
                }
                far = s >= min_sep2;
            }
            if (far)
                break;
        }
    }
    b.points.n = n;
    b.points.d = d;
    b.points.x.resize(n * d);
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t c = static_cast<uint32_t>(i % k);
        for (uint32_t j = 0; j < d; ++j)
            b.points.x[i * d + j] = b.centres[c * d + j] + sigma * rng.normal();
    }
    return b;
}

}  // namespace hetpu::kmeans
