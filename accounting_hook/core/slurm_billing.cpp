// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/slurm_billing.h"
#include "common/trim.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "accounting_hook/core/su_model.h"

namespace hetpu::accounting {

namespace {

// slurm.conf quotes the whole weight list; the quotes come off with the spaces.
constexpr const char *kSpaceOrQuote = " \t\"";

std::string lower(std::string s)
{
    for (char &c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

double parse_number(const std::string &text, const std::string &item, char *suffix)
{
    size_t used = 0;
    double v;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception &) {
        throw std::invalid_argument("TRESBillingWeights: '" + item + "' has no number after '='");
    }
    std::string rest = text.substr(used);
    *suffix = 0;
    if (rest.size() == 1 && std::string("KMGTkmgt").find(rest[0]) != std::string::npos)
        *suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
    else if (!rest.empty())
        throw std::invalid_argument("TRESBillingWeights: '" + item + "' ends in '" + rest +
                                    "' (only K, M, G, T may follow a Mem weight)");
    if (v < 0)
        throw std::invalid_argument("TRESBillingWeights: '" + item + "' is negative");
    return v;
}

}  // namespace

TresWeights parse_tres_billing_weights(const std::string &text)
{
    TresWeights w;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        item = trim(item, kSpaceOrQuote);
        if (item.empty())
            continue;
        size_t eq = item.find('=');
        if (eq == std::string::npos)
            throw std::invalid_argument("TRESBillingWeights: '" + item + "' is not TRES=weight");
        std::string name = lower(trim(item.substr(0, eq), kSpaceOrQuote));
        char suffix;
        double v = parse_number(trim(item.substr(eq + 1), kSpaceOrQuote), item, &suffix);
        if (name == "cpu") {
            if (suffix)
                throw std::invalid_argument("TRESBillingWeights: '" + item + "': only Mem takes a unit suffix");
            w.cpu = v;
        } else if (name == "mem") {
            // Slurm's default memory unit is the MiB.
            double per_gib_factor = 1024;
            switch (suffix) {
            case 'K': per_gib_factor = 1024.0 * 1024; break;
            case 'M': per_gib_factor = 1024; break;
            case 'G': per_gib_factor = 1; break;
            case 'T': per_gib_factor = 1.0 / 1024; break;
            default: break;
            }
            w.mem_per_gib = v * per_gib_factor;
        } else if (name == "gres/gpu" || name.rfind("gres/gpu:", 0) == 0) {
            if (suffix)
                throw std::invalid_argument("TRESBillingWeights: '" + item + "': only Mem takes a unit suffix");
            w.gpu = v;
        } else {
            throw std::invalid_argument("TRESBillingWeights: unknown TRES '" + trim(item.substr(0, eq), kSpaceOrQuote) +
                                        "' (this model knows CPU, Mem, GRES/gpu)");
        }
    }
    return w;
}

namespace {

// `v` with 9 significant digits, rounded up: Slurm truncates the billing to an integer, so a
// weight printed rounded down (0.0849616G for 2 SU over 24105 MB) bills a whole node's
// memory 1.99999 -> 1 instead of 2. A value exact in 9 digits is printed as it is.
std::string weight_text(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.8e", v);  // d.dddddddde[+-]x: 9 digits, rounded to nearest
    if (v > 0 && std::strtod(buf, nullptr) < v) {
        char *e = std::strchr(buf, 'e');
        long long digits = std::strtoll(std::string(buf, 1).append(buf + 2, e).c_str(), nullptr, 10) + 1;
        int exponent = std::atoi(e + 1);
        if (digits == 1000000000LL)
            digits /= 10, ++exponent;
        std::snprintf(buf, sizeof buf, "%lld.%08llde%d", digits / 100000000LL, digits % 100000000LL, exponent);
    }
    std::snprintf(buf, sizeof buf, "%.9g", std::strtod(buf, nullptr));
    return buf;
}

}  // namespace

std::string format_tres_billing_weights(const TresWeights &w)
{
    std::string s = "CPU=" + weight_text(w.cpu) + ",Mem=" + weight_text(w.mem_per_gib) + "G";
    if (w.gpu > 0)
        s += ",GRES/gpu=" + weight_text(w.gpu);
    return s;
}

double slurm_billing(const TresWeights &w, double cpus, double mem_gib, double gpus, bool max_tres)
{
    const double c = w.cpu * cpus, m = w.mem_per_gib * mem_gib, g = w.gpu * gpus;
    return max_tres ? std::max({c, m, g}) : c + m + g;
}

TresWeights equivalent_tres_weights(const Partition &p)
{
    const double w = energy_weight(p);
    TresWeights t;
    t.cpu = w / p.cores_per_node;
    t.mem_per_gib = w / p.mem_gib_per_node;
    t.gpu = p.has_gpus() ? w / p.gpus_per_node : 0;
    return t;
}

}  // namespace hetpu::accounting
