// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/benchmark_csv.h"
#include "common/trim.h"
#include "common/finite_number.h"
#include "common/input_file.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace hetpu::accounting {

std::vector<Benchmark> parse_benchmarks(const std::string &text, const std::string &source)
{
    std::vector<Benchmark> out;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    bool first_row = true;
    while (std::getline(in, line)) {
        ++n;
        const std::string where = source + ":" + std::to_string(n) + ": ";
        std::string row = trim(line.substr(0, line.find('#')));
        if (row.empty())
            continue;
        size_t comma = row.rfind(',');
        if (comma == std::string::npos)
            throw std::invalid_argument(where + "expected 'application,perf_ratio', got '" + row + "'");
        std::string app = trim(row.substr(0, comma)), ratio = trim(row.substr(comma + 1));
        if (first_row && app == "application" && ratio == "perf_ratio") {
            first_row = false;
            continue;
        }
        first_row = false;
        if (app.empty())
            throw std::invalid_argument(where + "the application name is empty");
        const std::optional<double> parsed = finite_number(ratio);
        if (!parsed)
            throw std::invalid_argument(where + "perf_ratio '" + ratio + "' of " + app + " is not a number");
        const double r = *parsed;
        if (!(r > 0))
            throw std::invalid_argument(where + "perf_ratio of " + app + " must be positive (CPU nodes per GPU node)");
        out.push_back({app, r});
    }
    if (out.empty())
        throw std::invalid_argument(source + ": no benchmark rows (expected lines 'application,perf_ratio')");
    return out;
}

std::vector<Benchmark> load_benchmarks(const std::string &path)
{
    std::string text, why;
    if (!read_whole_file(path, text, why))
        throw std::invalid_argument(path + ": cannot read the benchmarks file: " + why);
    return parse_benchmarks(text, path);
}

}  // namespace hetpu::accounting
