// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/pareto/pareto_command.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/gnuplot_png.h"
#include "common/json_line.h"
#include "common/cli_args.h"
#include "sched_policies/pareto/core/hepopta.h"

namespace hetpu::pareto_cli {

namespace {

std::string fmt(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string pct(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f%%", v);
    return buf;
}

const char *objective_name(EnergyObjective o) { return o == EnergyObjective::Dynamic ? "dynamic" : "total"; }

// Distribution in elements (the CSV's unit), not granules.
std::vector<unsigned long long> elements(const Result &r, const Distribution &d)
{
    std::vector<unsigned long long> out;
    for (Granules x : d.sizes)
        out.push_back(static_cast<unsigned long long>(x) * r.granular.granule);
    return out;
}

JsonRecord distribution_json(const Result &r, const Distribution &d)
{
    JsonRecord j = {{"time_s", d.time_s}, {"energy_j", energy_of(d, r.args.objective)}};
    if (r.args.objective == EnergyObjective::Total)
        j["dynamic_energy_j"] = d.dynamic_energy_j;
    j["active"] = d.active;
    j["distribution"] = elements(r, d);
    return j;
}

}  // namespace

void describe_options(CLI::App &app, Args &a)
{
    app.description("The globally Pareto-optimal time/energy workload distributions of a profile CSV "
                    "(HEPOPTA for dynamic energy, HTPOPTA for total energy), the load-balanced distribution "
                    "and the paper's metrics.");
    app.add_option("--profiles", a.profiles,
                   "CSV with the header processor,size,time_s,energy_j (one row per measured point; size in "
                   "elements, energy_j dynamic energy in joules)")
        ->required()
        ->type_name("FILE.csv");
    app.add_option("--workload", a.workload, "elements to distribute (a sum of one measured size, or 0, per processor)")
        ->required()
        ->type_name("N")
        ->check(CLI::Validator(
            [](std::string &v) -> std::string {
                std::uint64_t n = 0;
                return cli::parse_whole_number(v, n) && n > 0
                           ? ""
                           : "needs a positive integer number of elements (e.g. --workload 4096)";
            },
            "N>0"));
    app.add_option_function<std::string>(
           "--objective",
           [&a](const std::string &v) {
               a.objective = v == "total" ? EnergyObjective::Total : EnergyObjective::Dynamic;
           },
           "dynamic: time vs dynamic energy (HEPOPTA, default); total: time vs dynamic + P_S x time (HTPOPTA)")
        ->type_name("dynamic|total")
        ->check(CLI::Validator(
            [](std::string &v) -> std::string {
                return v == "dynamic" || v == "total" ? "" : "'" + v + "' is neither dynamic nor total";
            },
            ""));
    app.add_option("--base-power", a.base_power_w,
                   "P_S in watts for total (default: the CSV's '# base_power_w=' line, else 0); accepted and "
                   "ignored for dynamic")
        ->type_name("WATTS")
        ->check(CLI::Validator(
            [](std::string &v) -> std::string {
                double w = 0;
                return cli::parse_real(v, w) && w >= 0 ? "" : "needs a number of watts >= 0 (e.g. --base-power 90)";
            },
            ""));
    app.add_option_function<std::string>(
           "--format", [&a](const std::string &v) { a.json = v == "json"; },
           "table (default) or json (one object on one line)")
        ->type_name("table|json")
        ->check(CLI::Validator(
            [](std::string &v) -> std::string {
                return v == "table" || v == "json" ? "" : "'" + v + "' is neither table nor json";
            },
            ""));
    app.add_option("--plot", a.plot, "also draw the front and the load-balanced point with gnuplot")
        ->type_name("FILE.png");
    app.add_option("--processors", a.processors,
                   "the processors the CSV must describe, comma-separated (rows naming others are errors)")
        ->type_name("NAME,...")
        ->delimiter(',')
        ->expected(1, CLI::detail::expected_max_vector_size);
}

Args parse_args(int argc, const char *const *argv)
{
    Args a;
    CLI::App app{"", "hetpu pareto"};
    describe_options(app, a);
    cli::parse_or_throw(app, argc, argv);
    a.base_power_given = app.count("--base-power") > 0;
    return a;
}

Result compute(const Args &args, const ProfileSet &set)
{
    Result r;
    r.args = args;
    r.set = set;
    if (args.objective == EnergyObjective::Dynamic)
        r.args.base_power_w = 0;  // accepted and ignored
    r.granular = to_granules(set, args.workload);
    try {
        r.front = args.objective == EnergyObjective::Dynamic
                      ? hepopta(r.granular.profiles, r.granular.workload)
                      : htpopta(r.granular.profiles, r.granular.workload, r.args.base_power_w);
    } catch (const UnreachableWorkloadError &) {
        std::string sizes;
        for (const auto &p : set.processors) {
            std::uint64_t lo = p.points.front().size, hi = lo;
            for (const auto &pt : p.points) {
                lo = std::min(lo, pt.size);
                hi = std::max(hi, pt.size);
            }
            sizes += "; " + p.name + ": " + std::to_string(p.points.size()) + " sizes in [" + std::to_string(lo) +
                     ", " + std::to_string(hi) + "]";
        }
        throw UnreachableWorkloadError("workload " + std::to_string(args.workload) +
                                       " cannot be formed as a sum of one measured size (or 0) per processor" + sizes +
                                       "; choose a reachable workload or measure more sizes");
    }
    r.load_balanced = load_balanced_distribution(r.granular.profiles, r.granular.workload, r.args.base_power_w);
    r.metrics = front_metrics(r.front, r.load_balanced.distribution, args.objective);
    r.sources = energy_sources(set);
    return r;
}

std::string render_json(const Result &r)
{
    JsonRecord j = {{"objective", objective_name(r.args.objective)},
                    {"workload", r.args.workload},
                    {"granule", r.granular.granule}};
    if (r.args.objective == EnergyObjective::Total)
        j["base_power_w"] = r.args.base_power_w;
    JsonRecord &processors = j["processors"] = JsonRecord::array();
    for (const auto &p : r.set.processors)
        processors.push_back(p.name);
    j["energy_sources"] = r.sources;
    JsonRecord &front = j["front"] = JsonRecord::array();
    for (const Distribution &d : r.front)
        front.push_back(distribution_json(r, d));
    JsonRecord lb = distribution_json(r, r.load_balanced.distribution);
    lb["spread_s"] = r.load_balanced.spread_s;
    j["load_balanced"] = std::move(lb);
    const FrontMetrics &m = r.metrics;
    j["metrics"] = {{"front_size", m.front_size},
                    {"t_opt_s", m.t_opt_s},
                    {"e_at_t_opt_j", m.e_at_t_opt_j},
                    {"e_opt_j", m.e_opt_j},
                    {"t_at_e_opt_s", m.t_at_e_opt_s},
                    {"lb_time_improvement_pct", m.lb_time_improvement_pct},
                    {"lb_energy_saving_pct", m.lb_energy_saving_pct},
                    {"e_opt_slowdown_pct", m.e_opt_slowdown_pct},
                    {"t_opt_energy_increase_pct", m.t_opt_energy_increase_pct},
                    {"time_gain_for_5pct_energy_pct", m.time_gain_for_5pct_energy_pct},
                    {"energy_gain_for_5pct_time_pct", m.energy_gain_for_5pct_time_pct}};
    return json_line(j);
}

std::string render_table(const Result &r)
{
    std::ostringstream o;
    const char *what = r.args.objective == EnergyObjective::Dynamic ? "dynamic energy" : "total energy";
    o << "Pareto front of time vs " << what << " for " << r.args.workload << " elements";
    if (r.granular.granule > 1)
        o << " (granule " << r.granular.granule << ")";
    if (r.args.objective == EnergyObjective::Total)
        o << ", P_S = " << fmt(r.args.base_power_w) << " W";
    o << "\nprofiles: " << r.args.profiles;
    if (!r.sources.empty()) {
        o << " (energy source";
        for (std::size_t i = 0; i < r.sources.size(); ++i)
            o << (i ? ", " : ": ") << r.sources[i];
        o << ")";
    }
    o << "\n\n";
    char line[512];
    std::snprintf(line, sizeof line, "%4s %12s %12s", "#", "time_s", "energy_j");
    o << line;
    for (const auto &p : r.set.processors) {
        std::snprintf(line, sizeof line, " %10s", p.name.c_str());
        o << line;
    }
    o << "\n";
    auto row = [&](const std::string &label, const Distribution &d) {
        std::snprintf(line, sizeof line, "%4s %12.6g %12.6g", label.c_str(), d.time_s, energy_of(d, r.args.objective));
        o << line;
        for (unsigned long long x : elements(r, d)) {
            std::snprintf(line, sizeof line, " %10llu", x);
            o << line;
        }
        o << "\n";
    };
    for (std::size_t i = 0; i < r.front.size(); ++i)
        row(std::to_string(i + 1), r.front[i]);
    row("LB", r.load_balanced.distribution);
    const FrontMetrics &m = r.metrics;
    o << "\n"
      << m.front_size << " Pareto-optimal distributions (increasing energy); LB = load-balanced (time spread "
      << fmt(r.load_balanced.spread_s) << " s)\n";
    o << "time-optimal:   " << fmt(m.t_opt_s) << " s, " << fmt(m.e_at_t_opt_j) << " J ("
      << pct(m.t_opt_energy_increase_pct) << " more energy than the energy optimum)\n";
    o << "energy-optimal: " << fmt(m.t_at_e_opt_s) << " s, " << fmt(m.e_opt_j) << " J (" << pct(m.e_opt_slowdown_pct)
      << " slower than the time optimum)\n";
    o << "vs load-balanced (" << fmt(m.lb_time_s) << " s, " << fmt(m.lb_energy_j) << " J): performance improvement "
      << pct(m.lb_time_improvement_pct) << ", energy saving " << pct(m.lb_energy_saving_pct) << "\n";
    o << "5% more energy than the optimum buys " << pct(m.time_gain_for_5pct_energy_pct)
      << " performance; 5% more time than the optimum saves " << pct(m.energy_gain_for_5pct_time_pct) << " energy\n";
    return o.str();
}

void plot_png(const Result &r, const std::string &png)
{
    std::ostringstream s;
    s.precision(17);
    const std::string base = r.args.profiles.substr(r.args.profiles.find_last_of('/') + 1);
    s << "$front << EOD\n";
    for (const Distribution &x : r.front)
        s << x.time_s << " " << energy_of(x, r.args.objective) << "\n";
    s << "EOD\n$lb << EOD\n"
      << r.load_balanced.distribution.time_s << " " << energy_of(r.load_balanced.distribution, r.args.objective)
      << "\nEOD\n";
    s << "set title "
      << gnuplot_quoted(base + ": workload " + std::to_string(r.args.workload) + ", " + std::to_string(r.front.size()) +
                        " Pareto-optimal distributions")
      << "\nset xlabel 'execution time (s)'\nset ylabel "
      << gnuplot_quoted(r.args.objective == EnergyObjective::Dynamic ? "dynamic energy (J)" : "total energy (J)")
      << "\nset grid\nset key top right\n";
    // A one-point front (and the load-balanced point on it) has an empty range, which
    // gnuplot widens with a warning: give it a range around the point instead.
    double tmin = r.load_balanced.distribution.time_s, tmax = tmin;
    double emin = energy_of(r.load_balanced.distribution, r.args.objective), emax = emin;
    for (const Distribution &x : r.front) {
        tmin = std::min(tmin, x.time_s);
        tmax = std::max(tmax, x.time_s);
        emin = std::min(emin, energy_of(x, r.args.objective));
        emax = std::max(emax, energy_of(x, r.args.objective));
    }
    if (tmin == tmax)
        s << "set xrange [" << 0.9 * tmin << ":" << 1.1 * tmax + 1e-12 << "]\n";
    if (emin == emax)
        s << "set yrange [" << 0.9 * emin << ":" << 1.1 * emax + 1e-12 << "]\n";
    s << "plot $front using 1:2 with linespoints pt 7 ps 1 lc rgb '#c00000' title 'Pareto front', \\\n"
      << "     $lb using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#0050ff' title 'load-balanced'\n";
    gnuplot_png(s.str(), png);
}

int pareto_command(int argc, char **argv)
{
    Args args;
    CLI::App app{"", "hetpu pareto"};
    describe_options(app, args);
    if (std::optional<int> rc = cli::parse_args(app, argc, argv))
        return *rc;
    args.base_power_given = app.count("--base-power") > 0;
    Result r;
    try {
        ProfileSet set = read_profile_csv(args.profiles, args.processors);
        if (args.objective == EnergyObjective::Total && !args.base_power_given && set.base_power_w >= 0)
            args.base_power_w = set.base_power_w;
        r = compute(args, set);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu pareto: %s\n", e.what());
        return 1;
    }
    if (args.json)
        std::printf("%s\n", render_json(r).c_str());
    else
        std::fputs(render_table(r).c_str(), stdout);
    if (!args.plot.empty()) {
        try {
            plot_png(r, args.plot);
        } catch (const std::runtime_error &e) {
            std::fprintf(stderr, "hetpu pareto: --plot %s: %s\n", args.plot.c_str(), e.what());
            return 1;
        }
        if (!args.json)
            std::printf("plot: %s\n", args.plot.c_str());
    }
    return 0;
}

}  // namespace hetpu::pareto_cli
