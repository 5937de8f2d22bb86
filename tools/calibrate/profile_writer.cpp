// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/calibrate/profile_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace hetpu::calibrate {

std::string format_profile_csv(const std::vector<std::string> &comments, double base_power_w,
                               const std::vector<ProfileRow> &rows)
{
    std::string out;
    for (const std::string &c : comments)
        out += "# " + c + "\n";
    char line[512];
    std::snprintf(line, sizeof line, "# base_power_w=%.6g\n", base_power_w);
    out += line;
    out += "processor,size,time_s,energy_j,energy_source,reps,time_rel_ci,energy_rel_ci\n";
    for (const ProfileRow &r : rows) {
        std::snprintf(line, sizeof line, "%s,%llu,%.9g,%.9g,%s,%u,%.4g,%.4g\n", r.processor.c_str(),
                      static_cast<unsigned long long>(r.size), r.time_s, r.energy_j, r.energy_source.c_str(), r.reps,
                      r.time_rel_ci, r.energy_rel_ci);
        out += line;
    }
    return out;
}

void write_file_atomically(const std::string &path, const std::string &text)
{
    // mkdir -p of the parent directory.
    for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        const std::string dir = path.substr(0, slash);
        if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
            throw std::runtime_error("cannot create directory " + dir + ": " + std::strerror(errno));
    }
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    std::FILE *f = std::fopen(tmp.c_str(), "w");
    if (!f)
        throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok) {
        std::remove(tmp.c_str());
        throw std::runtime_error("writing " + tmp + " failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + why);
    }
}

}  // namespace hetpu::calibrate
