// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_data.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <sys/types.h>

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

struct BinaryHeader {
    uint64_t n = 0;
    uint32_t d = 0;
};

// The header's n and d, checked against each other and against the file's size.
bool check_binary_header(const std::string &path, const unsigned char *p, uint64_t file_size, BinaryHeader &h,
                         std::string &error)
{
    if (file_size < 24) {
        error = path + ": binary header truncated (" + std::to_string(file_size) + " bytes): the file is damaged";
        return false;
    }
    const uint64_t n = read_le64(p + 8), d = read_le64(p + 16);
    if (n == 0 || d == 0 || d > 1u << 20 || n > (UINT64_MAX / 8) / d) {
        error = path + ": binary header says n = " + std::to_string(n) + ", d = " + std::to_string(d) +
                ": both must be positive (d at most 1048576)";
        return false;
    }
    const uint64_t expect = 24 + n * d * 8;
    if (file_size != expect) {
        error = path + ": binary file has " + std::to_string(file_size) + " bytes but n = " + std::to_string(n) +
                ", d = " + std::to_string(d) + " need " + std::to_string(expect) + ": the file is truncated or damaged";
        return false;
    }
    h.n = n;
    h.d = static_cast<uint32_t>(d);
    return true;
}

// Bytes [offset, offset + size) of a file (size 0 reads nothing; a short file is an error).
bool read_file_range(const std::string &path, uint64_t offset, uint64_t size, std::string &out, std::string &error)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    out.resize(size);
    const bool ok =
        fseeko(f, static_cast<off_t>(offset), SEEK_SET) == 0 && (size == 0 || std::fread(&out[0], 1, size, f) == size);
    std::fclose(f);
    if (!ok)
        error = path + ": cannot read " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                ": the file is truncated or unreadable";
    return ok;
}

// Whether the file starts with the binary magic, and its size.
bool probe_file(const std::string &path, bool &binary, uint64_t &size, std::string &error)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    char magic[8] = {};
    binary = std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kBinaryMagic, 8) == 0;
    const bool ok = fseeko(f, 0, SEEK_END) == 0;
    const off_t end = ok ? ftello(f) : -1;
    std::fclose(f);
    if (end < 0) {
        error = path + ": cannot find its size";
        return false;
    }
    size = static_cast<uint64_t>(end);
    return true;
}

// Little-endian doubles of the binary format, each checked finite; `first` is the index of
// the first value in the file (for messages).
bool decode_doubles(const std::string &path, const unsigned char *p, uint64_t values, uint64_t first, uint32_t d,
                    double *out, std::string &error)
{
    for (uint64_t i = 0; i < values; ++i) {
        const uint64_t bits = read_le64(p + 8 * i);
        double v;
        std::memcpy(&v, &bits, 8);
        if (!std::isfinite(v)) {
            error = path + ": value " + std::to_string((first + i) % d) + " of point " +
                    std::to_string((first + i) / d) + " is not finite: the data must be finite numbers";
            return false;
        }
        out[i] = v;
    }
    return true;
}

// The binary header of a file known to start with the magic.
bool read_binary_header(const std::string &path, BinaryHeader &h, std::string &error)
{
    bool binary = false;
    uint64_t size = 0;
    std::string head;
    if (!probe_file(path, binary, size, error) || !read_file_range(path, 0, std::min<uint64_t>(size, 24), head, error))
        return false;
    return check_binary_header(path, reinterpret_cast<const unsigned char *>(head.data()), size, h, error);
}

}  // namespace

bool read_points(const std::string &path, Points &out, std::string &error)
{
    std::string data;
    if (!read_file(path, data, error))
        return false;
    if (data.size() >= 8 && data.compare(0, 8, kBinaryMagic) == 0) {
        const auto *p = reinterpret_cast<const unsigned char *>(data.data());
        BinaryHeader h;
        if (!check_binary_header(path, p, data.size(), h, error))
            return false;
        Points pts;
        pts.n = h.n;
        pts.d = h.d;
        pts.x.resize(h.n * h.d);
        if (!decode_doubles(path, p + 24, h.n * h.d, 0, h.d, pts.x.data(), error))
            return false;
        out = std::move(pts);
        return true;
    }
    Table t;
    if (!parse_table(data, path, TableFormat{}, t, error))
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
    return generate_blobs(n, d, k, sigma, seed, 0, n);
}

Blobs generate_blobs(uint64_t n, uint32_t d, uint32_t k, double sigma, uint64_t seed, uint64_t offset, uint64_t count)
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
    offset = std::min(offset, n);
    count = std::min(count, n - offset);
    for (uint64_t i = 0; i < offset * d; ++i)
        rng.skip_normal();
    b.points.n = count;
    b.points.d = d;
    b.points.x.resize(count * d);
    for (uint64_t i = offset; i < offset + count; ++i) {
        const uint32_t c = static_cast<uint32_t>(i % k);
        for (uint32_t j = 0; j < d; ++j)
            b.points.x[(i - offset) * d + j] = b.centres[c * d + j] + sigma * rng.normal();
    }
    return b;
}

bool scan_points(const std::string &path, uint64_t &n, uint32_t &d, std::string &error)
{
    bool binary = false;
    uint64_t size = 0;
    if (!probe_file(path, binary, size, error))
        return false;
    if (binary) {
        BinaryHeader h;
        if (!read_binary_header(path, h, error))
            return false;
        n = h.n;
        d = h.d;
        return true;
    }
    Points all;
    if (!read_points(path, all, error))
        return false;
    n = all.n;
    d = all.d;
    return true;
}

bool read_points_share(const std::string &path, uint64_t offset, uint64_t count, Points &out, std::string &error)
{
    uint64_t n = 0;
    uint32_t d = 0;
    bool binary = false;
    uint64_t size = 0;
    if (!probe_file(path, binary, size, error))
        return false;
    BinaryHeader h;
    if (!binary) {
        Points all;
        if (!read_points(path, all, error))
            return false;
        n = all.n;
        d = all.d;
        offset = std::min(offset, n);
        count = std::min(count, n - offset);
        out.n = count;
        out.d = d;
        out.x.assign(all.x.begin() + static_cast<ptrdiff_t>(offset * d),
                     all.x.begin() + static_cast<ptrdiff_t>((offset + count) * d));
        return true;
    }
    if (!read_binary_header(path, h, error))
        return false;
    offset = std::min(offset, h.n);
    count = std::min(count, h.n - offset);
    std::string bytes;
    if (!read_file_range(path, 24 + offset * h.d * 8, count * h.d * 8, bytes, error))
        return false;
    Points pts;
    pts.n = count;
    pts.d = h.d;
    pts.x.resize(count * h.d);
    if (!decode_doubles(path, reinterpret_cast<const unsigned char *>(bytes.data()), count * h.d, offset * h.d, h.d,
                        pts.x.data(), error))
        return false;
    out = std::move(pts);
    return true;
}

}  // namespace hetpu::kmeans
