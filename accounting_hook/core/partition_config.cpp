// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/partition_config.h"
#include "common/input_file.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

namespace hetpu::accounting {

namespace {

std::string at(const std::string &source, const toml::node &n)
{
    return source + ":" + std::to_string(n.source().begin.line) + ": ";
}

double number(const std::string &source, const std::string &key, const toml::node &n)
{
    if (auto i = n.value_exact<int64_t>())
        return static_cast<double>(*i);
    if (auto d = n.value_exact<double>()) {
        if (!std::isfinite(*d))
            throw ConfigError(at(source, n) + "'" + key + "' must be a finite number");
        return *d;
    }
    std::ostringstream type;
    type << n.type();
    throw ConfigError(at(source, n) + "'" + key + "' must be a number, not a " + type.str());
}

int integer(const std::string &source, const std::string &key, const toml::node &n)
{
    auto i = n.value_exact<int64_t>();
    if (!i)
        throw ConfigError(at(source, n) + "'" + key + "' must be a whole number (e.g. " + key + " = 4)");
    if (*i < 0 || *i > 1000000)
        throw ConfigError(at(source, n) + "'" + key + "' = " + std::to_string(*i) + " is out of range");
    return static_cast<int>(*i);
}

std::string text(const std::string &source, const std::string &key, const toml::node &n)
{
    auto s = n.value_exact<std::string>();
    if (!s)
        throw ConfigError(at(source, n) + "'" + key + "' must be a string in quotes");
    return *s;
}

Partition parse_partition(const std::string &source, const std::string &name, const toml::table &t)
{
    Partition p;
    p.name = name;
    p.origin = "config " + source;
    bool have_cores = false, have_mem = false;
    for (auto &&[k, v] : t) {
        const std::string key(k.str());
        if (key == "cores_per_node")
            p.cores_per_node = integer(source, key, v), have_cores = true;
        else if (key == "mem_gib_per_node")
            p.mem_gib_per_node = number(source, key, v), have_mem = true;
        else if (key == "cpu_sockets")
            p.cpu_sockets = integer(source, key, v);
        else if (key == "cpu_tdp_w")
            p.cpu_tdp_w = number(source, key, v);
        else if (key == "gpus_per_node")
            p.gpus_per_node = integer(source, key, v);
        else if (key == "gpu_tdp_w")
            p.gpu_tdp_w = number(source, key, v);
        else if (key == "gpu_sms")
            p.gpu_sms = integer(source, key, v);
        else if (key == "cpu_peak_flops")
            p.cpu_peak_flops = number(source, key, v);
        else if (key == "gpu_peak_flops")
            p.gpu_peak_flops = number(source, key, v);
        else if (key == "tres_billing_weights")
            p.tres_billing_weights = text(source, key, v);
        else
            throw ConfigError(at(source, v) + "unknown key '" + key + "' in [partition." + name +
                              "] (known: cores_per_node, mem_gib_per_node, cpu_sockets, cpu_tdp_w, gpus_per_node, "
                              "gpu_tdp_w, gpu_sms, cpu_peak_flops, gpu_peak_flops, tres_billing_weights)");
    }
    const std::string head = source + ":" + std::to_string(t.source().begin.line) + ": [partition." + name + "] ";
    if (!have_cores)
        throw ConfigError(head + "needs cores_per_node");
    if (!have_mem)
        throw ConfigError(head + "needs mem_gib_per_node");
    try {
        validate(p);
    } catch (const std::invalid_argument &e) {
        throw ConfigError(head + e.what());
    }
    return p;
}

}  // namespace

const Partition *AccountingConfig::find(const std::string &name) const
{
    for (const Partition &p : partitions)
        if (p.name == name)
            return &p;
    return nullptr;
}

const Partition &AccountingConfig::choose(const std::string &name) const
{
    std::string names;
    for (const Partition &p : partitions)
        names += (names.empty() ? "" : ", ") + p.name;
    const std::string wanted = !name.empty() ? name : default_partition;
    if (!wanted.empty()) {
        if (const Partition *p = find(wanted))
            return *p;
        throw ConfigError(source + ": no partition '" + wanted + "' (partitions: " + names + ")");
    }
    if (partitions.size() == 1)
        return partitions.front();
    throw ConfigError(source + ": several partitions (" + names +
                      "): name one (--partition, HETPU_PARTITION, or [accounting] partition = \"...\")");
}

AccountingConfig parse_accounting_config(const std::string &content, const std::string &source)
{
    toml::table root;
    try {
        root = toml::parse(content, source);
    } catch (const toml::parse_error &e) {
        throw ConfigError(source + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
    }
    AccountingConfig cfg;
    cfg.source = source;
    std::vector<std::pair<int, Partition>> found;
    for (auto &&[k, v] : root) {
        const std::string key(k.str());
        if (key == "partition") {
            const toml::table *parts = v.as_table();
            if (!parts)
                throw ConfigError(at(source, v) + "'partition' must be tables: [partition.NAME]");
            for (auto &&[pk, pv] : *parts) {
                const toml::table *pt = pv.as_table();
                if (!pt)
                    throw ConfigError(at(source, pv) + "partition." + std::string(pk.str()) +
                                      " must be a table [partition." + std::string(pk.str()) + "]");
                found.emplace_back(static_cast<int>(pt->source().begin.line),
                                   parse_partition(source, std::string(pk.str()), *pt));
            }
        } else if (key == "accounting") {
            const toml::table *a = v.as_table();
            if (!a)
                throw ConfigError(at(source, v) + "'accounting' must be a table [accounting]");
            for (auto &&[ak, av] : *a) {
                const std::string akey(ak.str());
                if (akey == "partition")
                    cfg.default_partition = text(source, akey, av);
                else if (akey == "grid_gco2e_per_kwh") {
                    double g = number(source, akey, av);
                    if (g < 0)
                        throw ConfigError(at(source, av) + "grid_gco2e_per_kwh cannot be negative");
                    cfg.grid_gco2e_per_kwh = g;
                } else
                    throw ConfigError(at(source, av) + "unknown key '" + akey +
                                      "' in [accounting] (known: partition, grid_gco2e_per_kwh)");
            }
        } else {
            throw ConfigError(at(source, v) + "unknown table or key '" + key +
                              "' (expected [partition.NAME] or [accounting])");
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (auto &f : found)
        cfg.partitions.push_back(std::move(f.second));
    if (cfg.partitions.empty())
        throw ConfigError(source + ": no [partition.NAME] table");
    if (!cfg.default_partition.empty() && !cfg.find(cfg.default_partition))
        throw ConfigError(source + ": [accounting] partition = \"" + cfg.default_partition + "\" names no [partition." +
                          cfg.default_partition + "] table");
    return cfg;
}

AccountingConfig load_accounting_config(const std::string &path)
{
    std::string text, why;
    if (!read_whole_file(path, text, why))
        throw ConfigError(path + ": cannot read the accounting config: " + why);
    return parse_accounting_config(text, path);
}

}  // namespace hetpu::accounting
