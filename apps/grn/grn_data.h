// SPDX-License-Identifier: LGPL-2.1-or-later
// Expression data of the grn app: reading a genes x samples table, the three-level
// discretisation, and a generator of time series from a planted random ternary network
// (the ground truth for precision and recall). Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hetpu::grn {

struct Expression {
    std::vector<std::string> genes;  // one name per row
    uint32_t samples = 0;
    std::vector<double> values;  // gene-major: gene g's samples at g * samples
};

// One gene per row: its name, then one value per sample (TSV, CSV or blank separated;
// an optional header row of sample names; '#' comments). Errors name the line.
bool read_expression(const std::string &path, Expression &out, std::string &error);

// Write as TSV with a header (gene, s0, s1, ...); written to a temporary file and renamed.
bool write_expression(const std::string &path, const Expression &e, std::string &error);

// The discretisation rule: per gene, z = (v - mean) / sd over the samples (population
// sd); level 0 when z < -threshold, 2 when z > threshold, 1 otherwise. A constant gene
// is all level 1. threshold 0.43 (about the normal distribution's tertiles) gives a
// normally distributed gene three equally likely levels.
std::vector<uint8_t> discretise(const Expression &e, double threshold);

struct Edge {
    uint32_t regulator, target;
    bool operator<(const Edge &o) const
    {
        return regulator != o.regulator ? regulator < o.regulator : target < o.target;
    }
    bool operator==(const Edge &o) const { return regulator == o.regulator && target == o.target; }
};

struct PlantedNetwork {
    Expression expression;
    std::vector<Edge> edges;  // sorted
};

// A random ternary network: every gene has `regulators` distinct regulators (not itself)
// and a random balanced transition table (each level equally often) that depends on all
// of them. A time series of `samples` states: uniform random start, then
// x_g(t+1) = table_g(x_regulators(t)), replaced by a uniform random level with
// probability noise. The expression value is level + N(0, 0.1^2). Deterministic in seed.
PlantedNetwork generate_network(uint32_t genes, uint32_t samples, uint32_t regulators, double noise, uint64_t seed);

// Write edges as TSV "regulator<TAB>target" with gene names.
bool write_edges(const std::string &path, const std::vector<Edge> &edges, const std::vector<std::string> &genes,
                 std::string &error);

}  // namespace hetpu::grn
