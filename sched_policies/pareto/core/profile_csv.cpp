// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/profile_csv.h"
#include "common/trim.h"
#include "common/finite_number.h"
#include "common/input_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

namespace hetpu {

namespace {

[[noreturn]] void fail(const std::string &source, int line, const std::string &what)
{
    throw ProfileCsvError(source + ":" + std::to_string(line) + ": " + what);
}

// Splits one line into fields. Quoted fields may hold commas and doubled quotes; a quote
// inside an unquoted field is taken literally only if it is not the first character.
std::vector<std::string> split_fields(const std::string &line, const std::string &source, int lineno)
{
    std::vector<std::string> fields;
    std::size_t i = 0;
    for (;;) {
        std::string field;
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
        if (i < line.size() && line[i] == '"') {
            ++i;
            bool closed = false;
            while (i < line.size()) {
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        field += '"';
                        i += 2;
                        continue;
                    }
                    closed = true;
                    ++i;
                    break;
                }
                field += line[i++];
            }
            if (!closed)
                fail(source, lineno, "unterminated quoted field; close it with '\"' on the same line");
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
                ++i;
            if (i < line.size() && line[i] != ',')
                fail(source, lineno, "unexpected text after a quoted field; put a comma after the closing quote");
        } else {
            const std::size_t comma = line.find(',', i);
            field = trim(line.substr(i, comma == std::string::npos ? std::string::npos : comma - i));
            i = comma == std::string::npos ? line.size() : comma;
        }
        fields.push_back(field);
        if (i >= line.size())
            break;
        ++i;  // the comma
    }
    return fields;
}

bool parse_size(const std::string &text, std::uint64_t &out)
{
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno || *end)
        return false;
    out = v;
    return true;
}

bool parse_double(const std::string &text, double &out)
{
    const std::optional<double> v = finite_number(text);
    if (!v)
        return false;
    out = *v;
    return true;
}

}  // namespace

int ProfileSet::find(const std::string &name) const
{
    for (std::size_t i = 0; i < processors.size(); ++i)
        if (processors[i].name == name)
            return static_cast<int>(i);
    return -1;
}

std::vector<std::string> ProfileSet::names() const
{
    std::vector<std::string> out;
    for (const auto &p : processors)
        out.push_back(p.name);
    return out;
}

ProfileSet parse_profile_csv(const std::string &text, const std::string &source, const std::vector<std::string> &known)
{
    ProfileSet set;
    for (const std::string &k : known)
        set.processors.push_back({k, {}});
    std::istringstream in(text);
    std::string raw;
    int lineno = 0;
    int col_proc = -1, col_size = -1, col_time = -1, col_energy = -1, col_source = -1;
    std::size_t ncols = 0;
    bool have_header = false;
    std::size_t rows = 0;
    std::map<std::pair<std::string, std::uint64_t>, int> seen;  // (processor, size) -> line
    while (std::getline(in, raw)) {
        ++lineno;
        const std::string line = trim(raw);
        if (line.empty())
            continue;
        if (line[0] == '#') {
            const std::string key = "base_power_w=";
            const std::string body = trim(line.substr(1));
            if (body.compare(0, key.size(), key) == 0) {
                double w = 0;
                if (!parse_double(trim(body.substr(key.size())), w) || w < 0)
                    fail(source, lineno, "base_power_w in '" + line + "' is not a number of watts >= 0");
                set.base_power_w = w;
            }
            continue;
        }
        std::vector<std::string> f = split_fields(line, source, lineno);
        if (!have_header) {
            for (std::size_t c = 0; c < f.size(); ++c) {
                int *slot = f[c] == "processor"       ? &col_proc
                            : f[c] == "size"          ? &col_size
                            : f[c] == "time_s"        ? &col_time
                            : f[c] == "energy_j"      ? &col_energy
                            : f[c] == "energy_source" ? &col_source
                                                      : nullptr;
                if (!slot)
                    continue;
                if (*slot >= 0)
                    fail(source, lineno, "column '" + f[c] + "' appears twice in the header");
                *slot = static_cast<int>(c);
            }
            if (col_proc < 0 || col_size < 0 || col_time < 0 || col_energy < 0)
                fail(source, lineno,
                     "the header must name the columns processor,size,time_s,energy_j (got '" + line +
                         "'); add that header line before the data");
            ncols = f.size();
            have_header = true;
            continue;
        }
        if (f.size() != ncols)
            fail(source, lineno,
                 "expected " + std::to_string(ncols) + " fields like the header, got " + std::to_string(f.size()));
        const std::string &name = f[col_proc];
        if (name.empty())
            fail(source, lineno, "empty processor name; name the processor the point was measured on (e.g. cpu0)");
        CsvPoint pt;
        pt.line = lineno;
        if (!parse_size(f[col_size], pt.size) || pt.size == 0)
            fail(source, lineno, "size '" + f[col_size] + "' is not a positive integer number of elements");
        if (!parse_double(f[col_time], pt.time_s) || !(pt.time_s > 0))
            fail(source, lineno, "time_s '" + f[col_time] + "' is not a positive number of seconds");
        if (!parse_double(f[col_energy], pt.energy_j) || pt.energy_j < 0)
            fail(source, lineno, "energy_j '" + f[col_energy] + "' is not a number of joules >= 0");
        if (col_source >= 0)
            pt.energy_source = f[col_source];
        int idx = set.find(name);
        if (idx < 0) {
            if (!known.empty()) {
                std::string list;
                for (const auto &k : known)
                    list += (list.empty() ? "" : ", ") + k;
                fail(source, lineno,
                     "unknown processor '" + name + "' (expected one of: " + list +
                         "); remove the row or list the processor");
            }
            set.processors.push_back({name, {}});
            idx = static_cast<int>(set.processors.size()) - 1;
        }
        auto [it, fresh] = seen.emplace(std::make_pair(name, pt.size), lineno);
        if (!fresh)
            fail(source, lineno,
                 "processor '" + name + "' size " + std::to_string(pt.size) + " was already given at line " +
                     std::to_string(it->second) + "; keep one row per (processor, size)");
        set.processors[idx].points.push_back(pt);
        ++rows;
    }
    if (!have_header)
        fail(source, lineno, "no header line; the file must start with processor,size,time_s,energy_j");
    if (rows == 0)
        fail(source, lineno, "no data rows after the header; measure some points (hetpu calibrate)");
    for (const auto &p : set.processors)
        if (p.points.empty())
            fail(source, lineno, "processor '" + p.name + "' has no rows; add its measured points");
    return set;
}

ProfileSet read_profile_csv(const std::string &path, const std::vector<std::string> &known)
{
    std::string text, why;
    if (!read_whole_file(path, text, why))
        throw ProfileCsvError(path + ": cannot read the profile file: " + why);
    return parse_profile_csv(text, path, known);
}

GranularProfiles to_granules(const ProfileSet &set, std::uint64_t workload)
{
    if (workload == 0)
        throw InvalidProfileError("the workload must be a positive number of elements");
    std::uint64_t g = workload;
    for (const auto &p : set.processors)
        for (const auto &pt : p.points)
            g = std::gcd(g, pt.size);
    GranularProfiles out;
    out.granule = g;
    if (workload / g > static_cast<std::uint64_t>(kMaxParetoWorkload))
        throw InvalidProfileError("workload " + std::to_string(workload) + " is " + std::to_string(workload / g) +
                                  " granules of " + std::to_string(g) + " elements (the gcd of all sizes), more than " +
                                  std::to_string(kMaxParetoWorkload) +
                                  "; measure sizes that are multiples of a larger step");
    out.workload = static_cast<Granules>(workload / g);
    for (const auto &p : set.processors) {
        ProcessorProfile prof;
        prof.name = p.name;
        for (const auto &pt : p.points)
            prof.points.push_back({static_cast<Granules>(pt.size / g), pt.time_s, pt.energy_j});
        out.profiles.push_back(std::move(prof));
    }
    return out;
}

std::vector<std::string> energy_sources(const ProfileSet &set)
{
    std::vector<std::string> out;
    for (const auto &p : set.processors)
        for (const auto &pt : p.points)
            if (!pt.energy_source.empty() && std::find(out.begin(), out.end(), pt.energy_source) == out.end())
                out.push_back(pt.energy_source);
    return out;
}

}  // namespace hetpu
