// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/scenario.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/input_file.h"

namespace hetpu::sim {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string &where, const std::string &what)
{
    throw ScenarioError("scenario: " + where + ": " + what);
}

double number(const json &j, const std::string &where)
{
    if (!j.is_number())
        fail(where, "expected a number, got " + j.dump());
    double v = j.get<double>();
    if (!std::isfinite(v))
        fail(where, "not a finite number");
    return v;
}

uint64_t count(const json &obj, const char *key, uint64_t fallback, bool required)
{
    if (!obj.contains(key)) {
        if (required)
            fail(key, "missing (a positive integer number of elements)");
        return fallback;
    }
    const json &j = obj[key];
    if (!j.is_number_unsigned() && (!j.is_number_integer() || j.get<long long>() < 0))
        fail(key, "expected a non-negative integer, got " + j.dump());
    return j.get<uint64_t>();
}

// A field of two numbers, such as [latency_seconds, seconds_per_element]; `shape` names
// them in the error.
std::pair<double, double> two_numbers(const json &j, const std::string &where, const std::string &shape)
{
    if (!j.is_array() || j.size() != 2)
        fail(where, "expected " + shape);
    return {number(j[0], where), number(j[1], where)};
}

std::vector<std::pair<double, double>> pairs(const json &j, const std::string &where)
{
    if (!j.is_array())
        fail(where, "expected an array of [x, y] pairs");
    std::vector<std::pair<double, double>> out;
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!j[i].is_array() || j[i].size() != 2)
            fail(at, "expected a pair [x, y], got " + j[i].dump());
        out.emplace_back(number(j[i][0], at), number(j[i][1], at));
    }
    return out;
}

std::string class_from_name(const std::string &name)
{
    std::string tail = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    while (!tail.empty() && std::isdigit(static_cast<unsigned char>(tail.back())))
        tail.pop_back();
    return tail.empty() ? name : tail;
}

UnitSpec parse_unit(const json &u, size_t index)
{
    UnitSpec spec;
    std::string where = "units[" + std::to_string(index) + "]";
    if (!u.is_object())
        fail(where, "expected an object");
    if (!u.contains("name") || !u["name"].is_string() || u["name"].get<std::string>().empty())
        fail(where, "missing \"name\"");
    spec.name = u["name"].get<std::string>();
    where += " (" + spec.name + ")";
    spec.unit_class =
        u.contains("class") && u["class"].is_string() ? u["class"].get<std::string>() : class_from_name(spec.name);
    if (!u.contains("profile"))
        fail(where, "missing \"profile\" ([[elements, seconds], ...])");
    spec.profile = pairs(u["profile"], where + ".profile");
    if (spec.profile.empty())
        fail(where + ".profile", "needs at least one [elements, seconds] point");
    for (size_t i = 0; i < spec.profile.size(); ++i) {
        const auto &[x, t] = spec.profile[i];
        if (x <= 0 || t <= 0)
            fail(where + ".profile", "sizes and times must be positive");
        if (i > 0 && x <= spec.profile[i - 1].first)
            fail(where + ".profile", "sizes must increase");
        // A larger block never takes less time: the optimum's exact search relies on it.
        if (i > 0 && t < spec.profile[i - 1].second)
            fail(where + ".profile", "times must not decrease with size");
    }
    if (u.contains("transfer")) {
        std::tie(spec.latency_s, spec.per_element_s) =
            two_numbers(u["transfer"], where + ".transfer", "[latency_seconds, seconds_per_element]");
        if (spec.latency_s < 0 || spec.per_element_s < 0)
            fail(where + ".transfer", "must not be negative");
    }
    if (u.contains("noise")) {
        spec.noise = number(u["noise"], where + ".noise");
        if (spec.noise < 0 || spec.noise > 1)
            fail(where + ".noise", "relative standard deviation must be in [0, 1]");
    }
    if (u.contains("unseen")) {
        spec.unseen_s = number(u["unseen"], where + ".unseen");
        if (spec.unseen_s < 0)
            fail(where + ".unseen", "seconds per block must not be negative");
    }
    if (u.contains("stall")) {
        std::tie(spec.stall_probability, spec.stall_s) =
            two_numbers(u["stall"], where + ".stall", "[probability, seconds]");
        if (spec.stall_probability < 0 || spec.stall_probability > 1 || spec.stall_s < 0)
            fail(where + ".stall", "probability must be in [0, 1] and seconds >= 0");
    }
    if (u.contains("power_w")) {
        spec.power_w = number(u["power_w"], where + ".power_w");
        if (spec.power_w < 0)
            fail(where + ".power_w", "watts must not be negative");
    }
    if (u.contains("slowdown")) {
        spec.slowdown = pairs(u["slowdown"], where + ".slowdown");
        for (size_t i = 0; i < spec.slowdown.size(); ++i) {
            if (spec.slowdown[i].first < 0 || spec.slowdown[i].second <= 0)
                fail(where + ".slowdown", "times must be >= 0 and factors > 0");
            if (i > 0 && spec.slowdown[i].first <= spec.slowdown[i - 1].first)
                fail(where + ".slowdown", "times must increase");
        }
    }
    return spec;
}

Scenario parse_tree(const std::string &json_text);

}  // namespace

// Every exception of the JSON library (a number overflowing a double is out_of_range, not
// parse_error; a value of the wrong type is type_error) becomes a ScenarioError, so that
// `hetpu sim` reports it instead of aborting.
Scenario parse_scenario(const std::string &json_text)
{
    try {
        return parse_tree(json_text);
    } catch (const json::parse_error &e) {
        throw ScenarioError(std::string("scenario: not valid JSON: ") + e.what());
    } catch (const json::exception &e) {
        throw ScenarioError(std::string("scenario: unusable JSON: ") + e.what());
    }
}

namespace {

Scenario parse_tree(const std::string &json_text)
{
    json root = json::parse(json_text);
    if (!root.is_object())
        fail("top level", "expected an object");
    Scenario s;
    s.workload = count(root, "workload", 0, true);
    if (s.workload == 0)
        fail("workload", "must be positive");
    s.granule = count(root, "granule", 1, false);
    if (s.granule == 0 || s.granule > s.workload)
        fail("granule", "must be in [1, workload]");
    s.x_init = count(root, "x_init", 0, false);
    if (s.x_init > s.workload)
        fail("x_init", "larger than the workload");
    s.min_block = count(root, "min_block", 0, false);
    if (root.contains("base_power_w")) {
        s.base_power_w = number(root["base_power_w"], "base_power_w");
        if (s.base_power_w < 0)
            fail("base_power_w", "watts must not be negative");
    }
    if (!root.contains("units") || !root["units"].is_array() || root["units"].empty())
        fail("units", "missing or empty (an array of processing units)");
    for (size_t i = 0; i < root["units"].size(); ++i)
        s.units.push_back(parse_unit(root["units"][i], i));
    return s;
}

}  // namespace

Scenario load_scenario(const std::string &path)
{
    std::string text, why;
    if (!read_whole_file(path, text, why))
        throw ScenarioError("scenario: cannot read '" + path + "': " + why);
    return parse_scenario(text);
}

}  // namespace hetpu::sim
