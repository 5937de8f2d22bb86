// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/node_rates.h"

#include <hetpu/hetpu.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/settings.h"

namespace hetpu {

namespace {

std::string node_rate_path() { return hetpu_home() + "/node_rates.txt"; }

}  // namespace

std::string node_rate_key(const hetpu_divisible_job &job, const std::vector<PlannerWorker> &local)
{
    const char *policy = hetpu_policy_name();
    std::string key =
        std::string(job.name ? job.name : "") + "/" + std::to_string(job.total) + "/" + (policy ? policy : "") + "/";
    for (const PlannerWorker &w : local)
        key += worker_kind_name(w.kind)[0];
    return key;
}

double load_node_rate(const std::string &key)
{
    std::ifstream in(node_rate_path());
    std::string k;
    double rate = 0, found = 0;
    while (in >> k >> rate)
        if (k == key && std::isfinite(rate) && rate > 0)
            found = rate;
    return found;
}

void save_node_rate(const std::string &key, double rate)
{
    if (!(rate > 0) || !std::isfinite(rate) || key.find_first_of(" \t\n") != std::string::npos)
        return;
    std::map<std::string, double> rates;
    {
        std::ifstream in(node_rate_path());
        std::string k;
        double r = 0;
        while (in >> k >> r)
            rates[k] = r;
    }
    rates[key] = rate;
    std::error_code ec;
    std::filesystem::create_directories(hetpu_home(), ec);
    const std::string tmp = node_rate_path() + ".tmp" + std::to_string(getpid());
    {
        std::ofstream out(tmp);
        for (const auto &[k, r] : rates)
            out << k << ' ' << r << '\n';
        if (!out)
            return;
    }
    std::filesystem::rename(tmp, node_rate_path(), ec);  // whole or not at all
}

}  // namespace hetpu
