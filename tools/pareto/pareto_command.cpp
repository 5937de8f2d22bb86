#include "tools/pareto/pareto_command.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/core/json_writer.h"
#include "sched_policies/core/hepopta.h"

extern char **environ;

namespace hetpu::pareto_cli {

namespace {

const char *kUsage =
    "usage: hetpu pareto --profiles FILE.csv --workload N [--objective dynamic|total]\n"
    "                    [--base-power WATTS] [--format table|json] [--plot FILE.png]\n"
    "                    [--processors NAME,NAME...]\n"
    "  --profiles    CSV with the header processor,size,time_s,energy_j (one row per\n"
    "                measured point; size in elements, energy_j dynamic energy in joules)\n"
    "  --workload    elements to distribute (a sum of one measured size, or 0, per processor)\n"
    "  --objective   dynamic: time vs dynamic energy (HEPOPTA, default);\n"
    "                total: time vs dynamic + P_S x time (HTPOPTA)\n"
    "  --base-power  P_S in watts for total (default: the CSV's '# base_power_w=' line, else 0);\n"
    "                accepted and ignored for dynamic\n"
    "  --format      table (default) or json (one object on one line)\n"
    "  --plot        also draw the front and the load-balanced point with gnuplot\n"
    "  --processors  the processors the CSV must describe (rows naming others are errors)\n";

bool parse_u64(const char *text, std::uint64_t &out)
{
    if (!text || !*text || std::strspn(text, "0123456789") != std::strlen(text))
        return false;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno || *end)
        return false;
    out = v;
    return true;
}

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

void write_distribution(JsonWriter &j, const Result &r, const Distribution &d)
{
    j.field("time_s", d.time_s).field("energy_j", energy_of(d, r.args.objective));
    if (r.args.objective == EnergyObjective::Total)
        j.field("dynamic_energy_j", d.dynamic_energy_j);
    j.field("active", d.active);
    j.begin_array("distribution");
    for (unsigned long long x : elements(r, d))
        j.value(x);
    j.end_array();
}

}  // namespace

std::string parse_args(int argc, const char *const *argv, Args &a)
{
    bool have_workload = false;
    for (int i = 0; i < argc; ++i) {
        const std::string opt = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&](const char *what) -> std::string {
            return v ? "" : opt + " needs " + what;
        };
        if (opt == "--help" || opt == "-h")
            return "help";
        if (opt == "--profiles") {
            if (auto e = need("a CSV file"); !e.empty()) return e;
            a.profiles = v;
        } else if (opt == "--workload") {
            if (!parse_u64(v, a.workload) || a.workload == 0)
                return "--workload needs a positive integer number of elements (e.g. --workload 4096)";
            have_workload = true;
        } else if (opt == "--objective") {
            if (auto e = need("dynamic or total"); !e.empty()) return e;
            if (!std::strcmp(v, "dynamic"))
                a.objective = EnergyObjective::Dynamic;
            else if (!std::strcmp(v, "total"))
                a.objective = EnergyObjective::Total;
            else
                return "--objective '" + std::string(v) + "' is neither dynamic nor total";
        } else if (opt == "--base-power") {
            char *end = nullptr;
            errno = 0;
            a.base_power_w = v ? std::strtod(v, &end) : -1;
            if (!v || errno || *end || !*v || !std::isfinite(a.base_power_w) || a.base_power_w < 0)
                return "--base-power needs a number of watts >= 0 (e.g. --base-power 90)";
        } else if (opt == "--format") {
            if (auto e = need("table or json"); !e.empty()) return e;
            if (!std::strcmp(v, "json"))
                a.json = true;
            else if (!std::strcmp(v, "table"))
                a.json = false;
            else
                return "--format '" + std::string(v) + "' is neither table nor json";
        } else if (opt == "--plot") {
            if (auto e = need("a PNG file name"); !e.empty()) return e;
            a.plot = v;
        } else if (opt == "--processors") {
            if (auto e = need("a comma-separated list of names"); !e.empty()) return e;
            std::stringstream ss(v);
            std::string name;
            while (std::getline(ss, name, ','))
                if (!name.empty())
                    a.processors.push_back(name);
            if (a.processors.empty())
                return "--processors needs at least one name";
        } else {
            return "unknown option '" + opt + "'";
        }
        ++i;  // every option takes a value
    }
    if (a.profiles.empty())
        return "--profiles FILE.csv is required";
    if (!have_workload)
        return "--workload N is required";
    return "";
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
    JsonWriter j;
    j.begin_object()
        .field("objective", objective_name(r.args.objective))
        .field("workload", static_cast<unsigned long long>(r.args.workload))
        .field("granule", static_cast<unsigned long long>(r.granular.granule));
    if (r.args.objective == EnergyObjective::Total)
        j.field("base_power_w", r.args.base_power_w);
    j.begin_array("processors");
    for (const auto &p : r.set.processors)
        j.value(p.name);
    j.end_array();
    j.begin_array("energy_sources");
    for (const auto &s : r.sources)
        j.value(s);
    j.end_array();
    j.begin_array("front");
    for (const Distribution &d : r.front) {
        j.begin_object();
        write_distribution(j, r, d);
        j.end_object();
    }
    j.end_array();
    j.key("load_balanced").begin_object();
    write_distribution(j, r, r.load_balanced.distribution);
    j.field("spread_s", r.load_balanced.spread_s);
    j.end_object();
    const FrontMetrics &m = r.metrics;
    j.key("metrics")
        .begin_object()
        .field("front_size", static_cast<unsigned long long>(m.front_size))
        .field("t_opt_s", m.t_opt_s)
        .field("e_at_t_opt_j", m.e_at_t_opt_j)
        .field("e_opt_j", m.e_opt_j)
        .field("t_at_e_opt_s", m.t_at_e_opt_s)
        .field("lb_time_improvement_pct", m.lb_time_improvement_pct)
        .field("lb_energy_saving_pct", m.lb_energy_saving_pct)
        .field("e_opt_slowdown_pct", m.e_opt_slowdown_pct)
        .field("t_opt_energy_increase_pct", m.t_opt_energy_increase_pct)
        .field("time_gain_for_5pct_energy_pct", m.time_gain_for_5pct_energy_pct)
        .field("energy_gain_for_5pct_time_pct", m.energy_gain_for_5pct_time_pct)
        .end_object();
    j.end_object();
    return j.str();
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
    o << "\n" << m.front_size << " Pareto-optimal distributions (increasing energy); LB = load-balanced (time spread "
      << fmt(r.load_balanced.spread_s) << " s)\n";
    o << "time-optimal:   " << fmt(m.t_opt_s) << " s, " << fmt(m.e_at_t_opt_j) << " J ("
      << pct(m.t_opt_energy_increase_pct) << " more energy than the energy optimum)\n";
    o << "energy-optimal: " << fmt(m.t_at_e_opt_s) << " s, " << fmt(m.e_opt_j) << " J ("
      << pct(m.e_opt_slowdown_pct) << " slower than the time optimum)\n";
    o << "vs load-balanced (" << fmt(m.lb_time_s) << " s, " << fmt(m.lb_energy_j)
      << " J): performance improvement " << pct(m.lb_time_improvement_pct) << ", energy saving "
      << pct(m.lb_energy_saving_pct) << "\n";
    o << "5% more energy than the optimum buys " << pct(m.time_gain_for_5pct_energy_pct)
      << " performance; 5% more time than the optimum saves " << pct(m.energy_gain_for_5pct_time_pct)
      << " energy\n";
    return o.str();
}

std::string plot_png(const Result &r, const std::string &png)
{
    char dir_template[] = "/tmp/hetpu-pareto-plot.XXXXXX";
    const char *dir = mkdtemp(dir_template);
    if (!dir)
        return std::string("cannot create a temporary directory: ") + std::strerror(errno);
    const std::string data = std::string(dir) + "/front.dat", lb = std::string(dir) + "/lb.dat",
                      script = std::string(dir) + "/plot.gp", tmp_png = png + ".tmp";
    auto cleanup = [&] {
        std::remove(data.c_str());
        std::remove(lb.c_str());
        std::remove(script.c_str());
        rmdir(dir);
    };
    {
        std::ofstream d(data), l(lb), s(script);
        for (const Distribution &x : r.front)
            d << x.time_s << " " << energy_of(x, r.args.objective) << "\n";
        l << r.load_balanced.distribution.time_s << " " << energy_of(r.load_balanced.distribution, r.args.objective)
          << "\n";
        auto quoted = [](const std::string &t) {
            std::string q = "'";
            for (char c : t)
                q += c == '\'' ? std::string("''") : std::string(1, c);
            return q + "'";
        };
        std::string base = r.args.profiles.substr(r.args.profiles.find_last_of('/') + 1);
        s << "set terminal pngcairo size 900,560 noenhanced\n"
          << "set output " << quoted(tmp_png) << "\n"
          << "set title " << quoted(base + ": workload " + std::to_string(r.args.workload) + ", " +
                                    std::to_string(r.front.size()) + " Pareto-optimal distributions")
          << "\n"
          << "set xlabel 'execution time (s)'\n"
          << "set ylabel " << quoted(r.args.objective == EnergyObjective::Dynamic ? "dynamic energy (J)"
                                                                                : "total energy (J)")
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
        s
          << "plot " << quoted(data) << " using 1:2 with linespoints pt 7 ps 1 lc rgb '#c00000' title 'Pareto front', \\\n"
          << "     " << quoted(lb) << " using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#0050ff' title 'load-balanced'\n";
        if (!d || !l || !s) {
            cleanup();
            return "cannot write the plot's temporary files in " + std::string(dir);
        }
    }
    pid_t pid;
    std::string script_arg = script;
    char *argv[] = {const_cast<char *>("gnuplot"), script_arg.data(), nullptr};
    int rc = posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ);
    int status = 0;
    if (rc == 0 && waitpid(pid, &status, 0) < 0)
        rc = errno;
    cleanup();
    if (rc != 0) {
        std::remove(tmp_png.c_str());
        return std::string("cannot run gnuplot: ") + std::strerror(rc) + " (install gnuplot-nox)";
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::remove(tmp_png.c_str());
        return "gnuplot failed (see its message above)";
    }
    if (std::rename(tmp_png.c_str(), png.c_str()) != 0) {
        std::remove(tmp_png.c_str());
        return "cannot write " + png + ": " + std::strerror(errno);
    }
    return "";
}

int pareto_command(int argc, char **argv)
{
    Args args;
    if (std::string why = parse_args(argc, argv, args); !why.empty()) {
        if (why == "help") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        std::fprintf(stderr, "hetpu pareto: %s\n%s", why.c_str(), kUsage);
        return 2;
    }
    Result r;
    try {
        ProfileSet set = read_profile_csv(args.profiles, args.processors);
        bool base_power_given = false;
        for (int i = 0; i < argc; ++i)
            base_power_given |= !std::strcmp(argv[i], "--base-power");
        if (args.objective == EnergyObjective::Total && !base_power_given && set.base_power_w >= 0)
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
        if (std::string why = plot_png(r, args.plot); !why.empty()) {
            std::fprintf(stderr, "hetpu pareto: --plot %s: %s\n", args.plot.c_str(), why.c_str());
            return 1;
        }
        if (!args.json)
            std::printf("plot: %s\n", args.plot.c_str());
    }
    return 0;
}

}  // namespace hetpu::pareto_cli
