// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/front_cache.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace hetpu {

namespace {

// Bumped whenever the layout below changes; older files are then ignored, not misread.
constexpr const char *kMagic = "hetpu-front";
constexpr int kVersion = 1;

std::string objective_name(EnergyObjective o) { return o == EnergyObjective::Dynamic ? "dynamic" : "total"; }

// %.17g round-trips every double exactly through strtod.
std::string exact(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// The key as the lines that start a file; equality of these lines is key equality.
std::string key_text(const FrontKey &k)
{
    std::ostringstream os;
    os << "profile " << k.profile_path << "\n";
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016" PRIx64, k.profile_hash);
    os << "content " << hex << "\n";
    os << "workload " << k.workload << "\n";
    os << "objective " << objective_name(k.objective) << "\n";
    os << "base_power_w " << exact(k.base_power_w) << "\n";
    os << "processors";
    for (const std::string &p : k.processors)
        os << " " << p;
    os << "\n";
    return os.str();
}

bool mkdirs(const std::string &dir)
{
    for (std::size_t i = 1; i <= dir.size(); ++i)
        if (i == dir.size() || dir[i] == '/') {
            const std::string part = dir.substr(0, i);
            if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
                return false;
        }
    struct stat st;
    return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::uint64_t content_hash(const std::string &bytes)
{
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

FrontCache::FrontCache(std::string dir, Warn warn) : dir_(std::move(dir)), warn_(std::move(warn)) {}

std::string FrontCache::path_for(const FrontKey &key) const
{
    char name[40];
    std::snprintf(name, sizeof name, "%016" PRIx64 ".front", content_hash(key_text(key)));
    return dir_ + "/" + name;
}

bool FrontCache::load(const FrontKey &key, CachedFront &out) const
{
    const std::string path = path_for(key);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;  // not computed yet: the normal first run, no warning
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    auto ignore = [&](const std::string &why) {
        warn_("ignoring cached front " + path + ": " + why);
        return false;
    };
    std::istringstream is(text);
    std::string magic;
    int version = 0;
    if (!(is >> magic >> version) || magic != kMagic)
        return ignore("not a hetpu front file");
    if (version != kVersion)
        return ignore("format version " + std::to_string(version) + ", expected " + std::to_string(kVersion));
    is.ignore(1);  // the newline after the version
    const std::string want = key_text(key);
    std::string have(want.size(), '\0');
    if (!is.read(&have[0], static_cast<std::streamsize>(have.size())) || have != want)
        return ignore("made for another profile, workload, objective or processor set");
    CachedFront f;
    std::string word;
    std::size_t points = 0;
    if (!(is >> word >> f.granule) || word != "granule" || f.granule == 0 || !(is >> word >> points) ||
        word != "points" || points == 0 || points > 1000000)
        return ignore("corrupt header");
    const std::size_t p = key.processors.size();
    for (std::size_t i = 0; i < points; ++i) {
        Distribution d;
        d.sizes.resize(p);
        if (!(is >> d.time_s >> d.dynamic_energy_j >> d.total_energy_j >> d.active))
            return ignore("corrupt point " + std::to_string(i + 1));
        for (std::size_t j = 0; j < p; ++j)
            if (!(is >> d.sizes[j]) || d.sizes[j] < 0)
                return ignore("corrupt point " + std::to_string(i + 1));
        f.front.push_back(std::move(d));
    }
    if (!(is >> word) || word != "end" || (is >> word))
        return ignore("truncated or trailing data");
    out = std::move(f);
    return true;
}

bool FrontCache::store(const FrontKey &key, const CachedFront &front) const
{
    if (!mkdirs(dir_)) {
        warn_("cannot create " + dir_ + " (" + std::strerror(errno) + "); the front is not cached");
        return false;
    }
    std::ostringstream os;
    os << kMagic << " " << kVersion << "\n" << key_text(key);
    os << "granule " << front.granule << "\npoints " << front.front.size() << "\n";
    for (const Distribution &d : front.front) {
        os << exact(d.time_s) << " " << exact(d.dynamic_energy_j) << " " << exact(d.total_energy_j) << " " << d.active;
        for (Granules x : d.sizes)
            os << " " << x;
        os << "\n";
    }
    os << "end\n";
    const std::string path = path_for(key);
    const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
    const std::string data = os.str();
    FILE *f = std::fopen(tmp.c_str(), "wb");
    bool ok = f && std::fwrite(data.data(), 1, data.size(), f) == data.size();
    if (f)
        ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        warn_("cannot write " + path + " (" + std::strerror(errno) + "); the front is not cached");
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace hetpu
