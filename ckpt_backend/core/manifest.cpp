// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/manifest.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

namespace hetpu::ckpt {

namespace {
constexpr const char *kMagic = "hetpu-ckpt-manifest 1";

std::string hex64(std::uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
    return buf;
}

bool parse_hex64(const std::string &s, std::uint64_t *v)
{
    if (s.size() != 16)
        return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(s.c_str(), &end, 16);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

[[noreturn]] void bad(int line, const std::string &what)
{
    throw Error(-EBADMSG, "manifest line " + std::to_string(line) + ": " + what);
}

// What is wrong with a name, "" when nothing.
std::string name_problem(const std::string &name)
{
    if (name.empty())
        return "is empty";
    if (name.size() > 128)
        return "is longer than 128 characters";
    if (name == "." || name == "..")
        return "is '.' or '..'";
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
            return std::string("contains '") + c + "' (use letters, digits, '_', '-', '.')";
    return "";
}
}  // namespace

std::uint64_t checksum_of(const void *data, std::size_t size) { return XXH3_64bits(data, size); }

std::uint64_t checksum_of(const void *data, std::size_t size, const std::function<void()> &between_chunks)
{
    if (!between_chunks || size <= kWriteChunk)
        return XXH3_64bits(data, size);
    XXH3_state_t *state = XXH3_createState();
    if (!state)
        return XXH3_64bits(data, size);
    XXH3_64bits_reset(state);
    const char *p = static_cast<const char *>(data);
    for (std::size_t done = 0; done < size; done += kWriteChunk) {
        if (done)
            between_chunks();
        XXH3_64bits_update(state, p + done, std::min(kWriteChunk, size - done));
    }
    const std::uint64_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return h;
}

void check_name(const std::string &name, const std::string &what)
{
    if (const std::string problem = name_problem(name); !problem.empty())
        throw Error(-EINVAL, what + " '" + name + "' " + problem);
}

std::string region_file_name(const std::string &name, std::int64_t version, std::size_t index)
{
    return name + ".v" + std::to_string(version) + "." + std::to_string(index) + ".dat";
}

std::string manifest_file_name(const std::string &name, std::int64_t version)
{
    return name + ".v" + std::to_string(version) + ".manifest";
}

std::string serialize(const Manifest &m)
{
    std::ostringstream o;
    o << kMagic << "\n"
      << "name " << m.name << "\n"
      << "version " << m.version << "\n"
      << "checksums " << (m.checksums ? 1 : 0) << "\n"
      << "regions " << m.regions.size() << "\n";
    for (const RegionRecord &r : m.regions)
        o << "region " << r.region << " " << r.size << " " << hex64(r.checksum) << " " << r.file << "\n";
    std::string body = o.str();
    return body + "end " + hex64(checksum_of(body.data(), body.size())) + "\n";
}

Manifest parse_manifest(const std::string &text)
{
    const std::size_t end_pos = text.rfind("end ");
    if (end_pos == std::string::npos || (end_pos > 0 && text[end_pos - 1] != '\n'))
        bad(0, "no 'end' line (torn or not a manifest)");
    std::uint64_t stored = 0;
    std::string tail = text.substr(end_pos + 4);
    if (tail.empty() || tail.back() != '\n')
        bad(0, "'end' line not terminated (torn)");
    tail.pop_back();
    if (!parse_hex64(tail, &stored))
        bad(0, "malformed 'end' checksum");
    if (checksum_of(text.data(), end_pos) != stored)
        bad(0, "self checksum mismatch (torn or edited manifest)");
    std::istringstream in(text.substr(0, end_pos));
    std::string line;
    int lineno = 0;
    Manifest m;
    std::size_t expected_regions = 0;
    bool have_count = false;
    while (std::getline(in, line)) {
        ++lineno;
        std::istringstream f(line);
        std::string key;
        f >> key;
        if (lineno == 1) {
            if (line != kMagic)
                bad(lineno, "expected '" + std::string(kMagic) + "'");
        } else if (key == "name") {
            f >> m.name;
        } else if (key == "version") {
            if (!(f >> m.version))
                bad(lineno, "version is not an integer");
        } else if (key == "checksums") {
            int c = 0;
            if (!(f >> c))
                bad(lineno, "checksums is not 0 or 1");
            m.checksums = c != 0;
        } else if (key == "regions") {
            if (!(f >> expected_regions))
                bad(lineno, "regions is not a count");
            have_count = true;
        } else if (key == "region") {
            RegionRecord r;
            std::string hex;
            if (!(f >> r.region >> r.size >> hex >> r.file) || !parse_hex64(hex, &r.checksum))
                bad(lineno, "expected 'region NAME SIZE CHECKSUM FILE'");
            m.regions.push_back(r);
        } else {
            bad(lineno, "unknown key '" + key + "'");
        }
    }
    if (!have_count || expected_regions != m.regions.size())
        bad(lineno, "region count does not match the region lines");
    if (!name_problem(m.name).empty())
        bad(2, "invalid checkpoint name");
    return m;
}

void write_manifest(const std::string &dir, const Manifest &m, const WriteOptions &opts)
{
    const std::string text = serialize(m);
    WriteOptions o = opts;
    o.simulated_capacity = 0;  // the manifest is tiny; its data already passed the check
    write_file_durably(dir, manifest_file_name(m.name, m.version), text.data(), text.size(), o);
}

Manifest read_manifest(const std::string &dir, const std::string &name, std::int64_t version)
{
    const std::string path = dir + "/" + manifest_file_name(name, version);
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) {
        int err = errno;
        throw Error(-err, "no manifest '" + path + "': " + std::strerror(err));
    }
    std::string text;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        text.append(buf, n);
    std::fclose(f);
    Manifest m;
    try {
        m = parse_manifest(text);
    } catch (const Error &e) {
        throw Error(e.code(), path + ": " + e.what());
    }
    if (m.name != name || m.version != version)
        throw Error(-EBADMSG, path + ": records another version");
    return m;
}

std::optional<Manifest> try_read_manifest(const std::string &dir, const std::string &name, std::int64_t version)
{
    try {
        return read_manifest(dir, name, version);
    } catch (const Error &) {
        return std::nullopt;  // missing, torn or foreign: not a version to offer
    }
}

void read_region(const std::string &dir, const Manifest &m, std::size_t index, void *dst)
{
    const RegionRecord &r = m.regions.at(index);
    read_file_exact(dir + "/" + r.file, dst, r.size);
    if (m.checksums && checksum_of(dst, r.size) != r.checksum)
        throw Error(-EBADMSG, "checksum mismatch in '" + dir + "/" + r.file + "' (corrupted data)");
}

namespace {

// Whether every region of m reads back with its checksum.
bool data_intact(const std::string &dir, const Manifest &m)
{
    try {
        for (std::size_t i = 0; i < m.regions.size(); ++i) {
            std::vector<char> buf(m.regions[i].size);
            read_region(dir, m, i, buf.data());
        }
    } catch (const Error &) {
        return false;
    }
    return true;
}

}  // namespace

std::vector<std::int64_t> complete_versions(const std::string &dir, const std::string &name, bool verify_data)
{
    std::vector<std::int64_t> versions;
    DIR *d = ::opendir(dir.c_str());
    if (!d)
        return versions;
    const std::string prefix = name + ".v", suffix = ".manifest";
    std::vector<std::int64_t> candidates;
    while (struct dirent *e = ::readdir(d)) {
        std::string f = e->d_name;
        if (f.size() <= prefix.size() + suffix.size() || f.compare(0, prefix.size(), prefix) != 0 ||
            f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        std::string num = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
        char *end = nullptr;
        long long v = std::strtoll(num.c_str(), &end, 10);
        if (!num.empty() && *end == '\0')
            candidates.push_back(v);
    }
    ::closedir(d);
    for (std::int64_t v : candidates) {
        const std::optional<Manifest> m = try_read_manifest(dir, name, v);
        if (!m)
            continue;
        bool ok = true;
        for (std::size_t i = 0; ok && i < m->regions.size(); ++i) {
            struct stat st;
            const std::string p = dir + "/" + m->regions[i].file;
            ok = ::stat(p.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == m->regions[i].size;
        }
        if (ok && verify_data)
            ok = data_intact(dir, *m);
        if (ok)
            versions.push_back(v);
    }
    std::sort(versions.begin(), versions.end());
    return versions;
}

std::optional<std::int64_t> latest_complete(const std::string &dir, const std::string &name, bool verify_data)
{
    // Newest first, so verify_data only reads what it must.
    std::vector<std::int64_t> all = complete_versions(dir, name, false);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
        if (!verify_data)
            return *it;
        const std::optional<Manifest> m = try_read_manifest(dir, name, *it);
        if (m && data_intact(dir, *m))
            return *it;
    }
    return std::nullopt;
}

namespace {

// Splits "<name>.v<version>.manifest" or "<name>.v<version>.<index>.dat"; false for any
// other file name (temporaries start with '.').
bool parse_tier_file(const std::string &f, std::string *name, std::int64_t *version, bool *is_manifest)
{
    if (f.empty() || f[0] == '.')
        return false;
    std::string stem;
    const std::string manifest = ".manifest", data = ".dat";
    auto ends_with = [&f](const std::string &tail) {
        return f.size() > tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends_with(manifest)) {
        stem = f.substr(0, f.size() - manifest.size());
        *is_manifest = true;
    } else if (ends_with(data)) {
        stem = f.substr(0, f.size() - data.size());
        const std::size_t dot = stem.rfind('.');
        if (dot == std::string::npos || dot + 1 == stem.size() ||
            stem.find_first_not_of("0123456789", dot + 1) != std::string::npos)
            return false;
        stem.resize(dot);
        *is_manifest = false;
    } else {
        return false;
    }
    const std::size_t v = stem.rfind(".v");
    if (v == std::string::npos || v == 0)
        return false;
    const std::size_t digits = v + 2 + (v + 2 < stem.size() && stem[v + 2] == '-');  // versions may be negative
    if (digits == stem.size() || stem.find_first_not_of("0123456789", digits) != std::string::npos ||
        stem.size() - digits > 18)
        return false;
    *name = stem.substr(0, v);
    *version = std::strtoll(stem.c_str() + v + 2, nullptr, 10);
    return true;
}

template <typename F> void for_each_tier_file(const std::string &dir, F f)
{
    DIR *d = ::opendir(dir.c_str());
    if (!d)
        return;
    while (struct dirent *e = ::readdir(d)) {
        std::string name;
        std::int64_t version = 0;
        bool is_manifest = false;
        if (parse_tier_file(e->d_name, &name, &version, &is_manifest))
            f(name, version, is_manifest);
    }
    ::closedir(d);
}

}  // namespace

std::vector<std::string> checkpoint_names(const std::string &dir)
{
    std::set<std::string> names;
    for_each_tier_file(dir, [&](const std::string &name, std::int64_t, bool) { names.insert(name); });
    return {names.begin(), names.end()};
}

std::vector<std::int64_t> orphan_versions(const std::string &dir, const std::string &name)
{
    std::set<std::int64_t> with_data;
    for_each_tier_file(dir, [&](const std::string &n, std::int64_t v, bool is_manifest) {
        if (n == name && !is_manifest)
            with_data.insert(v);
    });
    std::vector<std::int64_t> orphans;
    for (std::int64_t v : with_data)
        if (!try_read_manifest(dir, name, v))
            orphans.push_back(v);
    return orphans;
}

void remove_version(const std::string &dir, const std::string &name, std::int64_t version)
{
    const std::string mpath = dir + "/" + manifest_file_name(name, version);
    if (::unlink(mpath.c_str()) != 0 && errno != ENOENT) {
        int err = errno;
        throw Error(-err, "cannot remove '" + mpath + "': " + std::strerror(err));
    }
    sync_directory(dir);
    // Data files: those the manifest lists, plus any of this version without one (a crash
    // between data and manifest) and temporaries.
    const std::string prefix = name + ".v" + std::to_string(version) + ".";
    DIR *d = ::opendir(dir.c_str());
    if (d) {
        while (struct dirent *e = ::readdir(d)) {
            std::string f = e->d_name;
            bool ours = f.compare(0, prefix.size(), prefix) == 0 || f.compare(0, prefix.size() + 1, "." + prefix) == 0;
            if (ours)
                ::unlinkat(::dirfd(d), f.c_str(), 0);
        }
        ::closedir(d);
    }
}

}  // namespace hetpu::ckpt
