// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "apps/common/output_file.h"
#include "apps/common/splitmix.h"
#include "common/text_table.h"

namespace hetpu::grn {

bool read_expression(const std::string &path, Expression &out, std::string &error)
{
    TableFormat format;
    format.row_names = true;
    Table t;
    if (!read_table(path, format, t, error))
        return false;
    if (t.cols > UINT32_MAX) {
        error = path + ": too many samples";
        return false;
    }
    Expression e;
    e.genes = std::move(t.row_names);
    e.samples = static_cast<uint32_t>(t.cols);
    e.values = std::move(t.values);
    out = std::move(e);
    return true;
}

bool write_expression(const std::string &path, const Expression &e, std::string &error)
{
    std::string text = "gene";
    for (uint32_t j = 0; j < e.samples; ++j)
        text += "\ts" + std::to_string(j);
    text += '\n';
    char buf[40];
    for (size_t g = 0; g < e.genes.size(); ++g) {
        text += e.genes[g];
        for (uint32_t j = 0; j < e.samples; ++j) {
            std::snprintf(buf, sizeof buf, "\t%.6g", e.values[g * e.samples + j]);
            text += buf;
        }
        text += '\n';
    }
    return apps::write_file_atomically(path, text, error);
}

std::vector<uint8_t> discretise(const Expression &e, double threshold)
{
    const size_t genes = e.genes.size(), s = e.samples;
    std::vector<uint8_t> levels(genes * s, 1);
    for (size_t g = 0; g < genes; ++g) {
        const double *v = e.values.data() + g * s;
        double mean = 0;
        for (size_t j = 0; j < s; ++j)
            mean += v[j];
        mean /= static_cast<double>(s);
        double var = 0;
        for (size_t j = 0; j < s; ++j)
            var += (v[j] - mean) * (v[j] - mean);
        const double sd = std::sqrt(var / static_cast<double>(s));
        if (!(sd > 0))
            continue;  // constant gene: all level 1
        for (size_t j = 0; j < s; ++j) {
            const double z = (v[j] - mean) / sd;
            levels[g * s + j] = z < -threshold ? 0 : z > threshold ? 2 : 1;
        }
    }
    return levels;
}

namespace {

// A balanced table over r inputs (3^r entries, each level equally often) that depends on
// every input: for each input some setting of the others makes it change the output.
std::vector<uint8_t> random_table(uint32_t r, apps::SplitMix64 &rng)
{
    uint32_t configs = 1;
    for (uint32_t i = 0; i < r; ++i)
        configs *= 3;
    std::vector<uint8_t> table(configs);
    for (;;) {
        for (uint32_t x = 0; x < configs; ++x)
            table[x] = static_cast<uint8_t>(x % 3);
        for (uint32_t x = configs - 1; x > 0; --x)  // Fisher-Yates
            std::swap(table[x], table[rng.below(x + 1)]);
        bool all_matter = true;
        uint32_t stride = 1;
        for (uint32_t i = 0; i < r && all_matter; ++i, stride *= 3) {
            bool matters = false;
            for (uint32_t x = 0; x < configs && !matters; ++x) {
                const uint32_t digit = (x / stride) % 3;
                const uint32_t base = x - digit * stride;
                matters = table[base] != table[base + stride] || table[base] != table[base + 2 * stride];
            }
            all_matter = matters;
        }
        if (all_matter || r == 0)
            return table;
    }
}

}  // namespace

PlantedNetwork generate_network(uint32_t genes, uint32_t samples, uint32_t regulators, double noise, uint64_t seed)
{
    apps::SplitMix64 rng{seed * 0x9e3779b97f4a7c15ull + 0x67726eull};
    PlantedNetwork net;
    Expression &e = net.expression;
    e.samples = samples;
    for (uint32_t g = 0; g < genes; ++g)
        e.genes.push_back("g" + std::to_string(g));
    std::vector<std::vector<uint32_t>> regs(genes);
    std::vector<std::vector<uint8_t>> tables(genes);
    for (uint32_t g = 0; g < genes; ++g) {
        while (regs[g].size() < regulators) {
            uint32_t r = static_cast<uint32_t>(rng.below(genes));
            if (r != g && std::find(regs[g].begin(), regs[g].end(), r) == regs[g].end())
                regs[g].push_back(r);
        }
        tables[g] = random_table(regulators, rng);
        for (uint32_t r : regs[g])
            net.edges.push_back({r, g});
    }
    std::sort(net.edges.begin(), net.edges.end());
    std::vector<uint8_t> state(genes), next(genes);
    for (uint32_t g = 0; g < genes; ++g)
        state[g] = static_cast<uint8_t>(rng.below(3));
    e.values.resize(static_cast<size_t>(genes) * samples);
    for (uint32_t t = 0; t < samples; ++t) {
        for (uint32_t g = 0; g < genes; ++g)
            e.values[static_cast<size_t>(g) * samples + t] = state[g] + 0.1 * rng.normal();
        for (uint32_t g = 0; g < genes; ++g) {
            uint32_t x = 0, stride = 1;
            for (uint32_t r : regs[g]) {
                x += state[r] * stride;
                stride *= 3;
            }
            next[g] = rng.uniform() < noise ? static_cast<uint8_t>(rng.below(3)) : tables[g][x];
        }
        state.swap(next);
    }
    return net;
}

bool write_edges(const std::string &path, const std::vector<Edge> &edges, const std::vector<std::string> &genes,
                 std::string &error)
{
    std::string text = "regulator\ttarget\n";
    for (const Edge &e : edges)
        text += genes[e.regulator] + "\t" + genes[e.target] + "\n";
    return apps::write_file_atomically(path, text, error);
}

}  // namespace hetpu::grn
