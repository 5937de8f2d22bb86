// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/cluster_scenario.h"

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "common/input_file.h"

namespace hetpu::sim {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string &where, const std::string &what)
{
    throw ScenarioError("cluster: " + where + ": " + what);
}

double positive(const json &obj, const char *key, double fallback, const std::string &where)
{
    if (!obj.contains(key))
        return fallback;
    const json &j = obj[key];
    if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < 0)
        fail(where + "." + key, "expected a non-negative number, got " + j.dump());
    return j.get<double>();
}

Link link_of(const json &obj, const char *key, const std::string &where)
{
    Link l;
    if (!obj.contains(key))
        return l;
    const json &j = obj[key];
    if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number() || j[0].get<double>() < 0 ||
        !(j[1].get<double>() > 0))
        fail(where + "." + key, "expected [latency seconds >= 0, bytes per second > 0], got " + j.dump());
    l.latency_s = j[0].get<double>();
    l.bytes_per_s = j[1].get<double>();
    return l;
}

}  // namespace

size_t ClusterScenario::pus() const
{
    size_t n = 0;
    for (const ClusterNode &node : nodes)
        n += node.units.size();
    return n;
}

ClusterScenario parse_cluster(const std::string &json_text)
{
    json root;
    try {
        root = json::parse(json_text);
    } catch (const json::parse_error &e) {
        fail("JSON", e.what());
    }
    if (!root.is_object())
        fail("JSON", "expected an object");
    // The job's fields are a single-node scenario's: parse them with its rules.
    json job = {{"workload", root.value("workload", json())},
                {"units", json::array({{{"name", "probe"}, {"profile", {{1, 1.0}}}}})}};
    for (const char *key : {"granule", "x_init", "min_block"})
        if (root.contains(key))
            job[key] = root[key];
    const Scenario probe = parse_scenario(job.dump());
    ClusterScenario c;
    c.workload = probe.workload;
    c.granule = probe.granule;
    c.x_init = probe.x_init;
    c.min_block = probe.min_block;
    c.bytes_in = positive(root, "bytes_in", 0, "root");
    c.bytes_out = positive(root, "bytes_out", 0, "root");
    if (root.contains("report_period_s"))
        fail("report_period_s", "not a cluster's to set: the ranks report at the real runner's cadence (2% of the "
                                "time run so far, at most 2,000 reports per second at rank 0); remove the field");
    c.rank0_link = link_of(root, "rank0_link", "root");

    if (!root.contains("node_types") || !root["node_types"].is_object() || root["node_types"].empty())
        fail("node_types", "missing or empty (an object of named node types)");
    std::map<std::string, std::pair<Link, std::vector<UnitSpec>>> types;
    for (const auto &[name, t] : root["node_types"].items()) {
        if (!t.is_object() || !t.contains("units"))
            fail("node_types." + name, "expected {\"link\": [...], \"units\": [...]}");
        json one = {{"workload", 1}, {"units", t["units"]}};
        Scenario s;
        try {
            s = parse_scenario(one.dump());
        } catch (const ScenarioError &e) {
            fail("node_types." + name, e.what());
        }
        types[name] = {link_of(t, "link", "node_types." + name), s.units};
    }
    if (!root.contains("nodes") || !root["nodes"].is_array() || root["nodes"].empty())
        fail("nodes", "missing or empty (an array of {\"type\": ...})");
    for (size_t i = 0; i < root["nodes"].size(); ++i) {
        const json &n = root["nodes"][i];
        const std::string where = "nodes[" + std::to_string(i) + "]";
        if (!n.is_object() || !n.contains("type") || !n["type"].is_string())
            fail(where, "expected {\"type\": NAME}");
        auto t = types.find(n["type"].get<std::string>());
        if (t == types.end())
            fail(where + ".type", "unknown node type '" + n["type"].get<std::string>() + "'");
        ClusterNode node;
        node.type = t->first;
        node.link = t->second.first;
        node.units = t->second.second;
        const double slowdown = positive(n, "slowdown", 1.0, where);
        if (!(slowdown > 0))
            fail(where + ".slowdown", "must be positive");
        for (UnitSpec &u : node.units) {
            u.name = "n" + std::to_string(i) + "." + u.name;
            if (slowdown != 1.0) {
                // On top of the unit's own slowdowns, whenever they start.
                for (auto &[when, factor] : u.slowdown)
                    factor *= slowdown;
                if (u.slowdown.empty() || u.slowdown.front().first > 0)
                    u.slowdown.insert(u.slowdown.begin(), {0.0, slowdown});
            }
        }
        node.fail_at_s = n.contains("fail_at") ? positive(n, "fail_at", -1, where) : -1;
        if (n.contains("moves")) {
            if (!n["moves"].is_boolean())
                fail(where + ".moves", "expected true or false, got " + n["moves"].dump());
            node.moves = n["moves"].get<bool>();
        }
        if (i == 0 && node.fail_at_s >= 0)
            fail(where + ".fail_at", "node 0 is the coordinator (rank 0): it cannot fail in the simulation");
        c.nodes.push_back(std::move(node));
    }
    return c;
}

ClusterScenario load_cluster(const std::string &path)
{
    std::string text, why;
    if (!read_whole_file(path, text, why))
        throw ScenarioError("cannot read the cluster '" + path + "': " + why);
    return parse_cluster(text);
}

}  // namespace hetpu::sim
