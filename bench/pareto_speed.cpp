// SPDX-License-Identifier: LGPL-2.1-or-later
// Speed of the exact Pareto cores (HPOPTA, HEPOPTA, HTPOPTA) on random non-monotone
// profiles. Prints a human table, then one JSON line per (p, m, workload).
// (The implementation these cores replaced is kept at the git tag pareto-legacy-baseline.)
//
// Instance: processor i has m distinct sizes drawn from 1..2m granules (so sizes are
// missing), time t(x) = a_i x (0.6 + 0.8 u) and dynamic energy e(x) = b_i x (0.6 + 0.8 u')
// with fresh uniform u, u' per point (non-monotone, non-convex), a_i, b_i spread 1:8 so
// the processors differ. Workloads: 10, 30, 50, 70 and 90% of the capacity (the sum of the
// largest sizes), each moved down to the nearest reachable workload.
//
// Times are the best of `reps` runs (default 3) of one whole call, validation included:
// wall clock in the table, wall clock and this thread's CPU time in the JSON lines (on a
// shared machine the CPU time is the steadier figure).
// Memory is the peak of heap bytes live during one call (a counting operator new), so it
// is the algorithm's own working set; the process's peak RSS is printed at the end.
// Every front is checked against HPOPTA, computed apart: its fastest point must take exactly
// HPOPTA's optimal time (times are maxima of profile points, so equal to the bit); the exit
// status is 1 otherwise. tests/unit/pareto checks the fronts against brute force.
//
// A second table sets first calls beside repeated ones: `first` is the median over
// `reps` fresh processes (this program re-executed with --one-call) of one call's time, the
// process's first and in a fresh workspace; `no_ws` the median of repeated calls without a
// workspace (each makes a temporary one); `kept` the median of repeated calls of the same
// instance sharing one workspace (after one warm-up call); `varied` the same with the workload
// one granule smaller at every call, as a process computing fronts at several workloads calls
// it. first/varied is the ratio to watch (target <= 1.5): repeating one identical instance
// trains the branch predictor on its exact comparisons (HPOPTA at p=8, n=800 went from 190 to
// 90 us over ten identical calls, and stayed at 165-190 us with n varied), which no caller sees.
//
// Usage: pareto_speed [p:m,p:m,...] [reps]   (default 2:500,4:500,8:100,8:200,8:500,16:100,16:200 3)
#include "bench/heap_counter.h"
#include "common/json_line.h"
#include "common/cli_args.h"
#include "sched_policies/pareto/core/hepopta.h"
#include "sched_policies/pareto/core/hpopta.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

namespace {

std::vector<hetpu::ProcessorProfile> make_profiles(int p, int m, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0), spread(1.0, 8.0);
    std::vector<hetpu::ProcessorProfile> profs(p);
    for (int i = 0; i < p; ++i) {
        const double a = 1e-3 * spread(rng), b = 0.1 * spread(rng);
        std::vector<hetpu::Granules> sizes;
        for (hetpu::Granules x = 1; x <= 2 * m; ++x)
            sizes.push_back(x);
        std::shuffle(sizes.begin(), sizes.end(), rng);
        sizes.resize(m);
        std::sort(sizes.begin(), sizes.end());
        profs[i].name = "P" + std::to_string(i);
        for (hetpu::Granules x : sizes)
            profs[i].points.push_back({x, a * x * (0.6 + 0.8 * u(rng)), b * x * (0.6 + 0.8 * u(rng))});
    }
    return profs;
}

struct Measure {
    double s = 1e300;       // best wall-clock time
    double cpu = 1e300;     // best CPU time of this thread (what preemption does not inflate)
    std::size_t bytes = 0;  // peak live heap bytes during the call
};

double thread_cpu_s()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <typename F> Measure measure(int reps, F &&f)
{
    Measure out;
    for (int r = 0; r < reps; ++r) {
        const std::size_t base = hetpu::bench::heap_mark();
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_s();
        f();
        out.cpu = std::min(out.cpu, thread_cpu_s() - c0);
        out.s = std::min(out.s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        out.bytes = std::max(out.bytes, hetpu::bench::heap_peak_since(base));
    }
    return out;
}

// The front's fastest point takes HPOPTA's optimal time.
bool fastest_is_optimal(const std::vector<hetpu::Distribution> &front, const hetpu::Distribution &optimal)
{
    if (front.empty())
        return false;
    double fastest = front.front().time_s;
    for (const hetpu::Distribution &d : front)
        fastest = std::min(fastest, d.time_s);
    return fastest == optimal.time_s;
}

template <typename F> double median_s(int reps, F &&f)
{
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

hetpu::Granules parse_granules(const std::string &s) { return static_cast<hetpu::Granules>(std::stoll(s)); }

std::uint32_t seed_of(int p, int m) { return 20240601u + 1000u * static_cast<unsigned>(p) + static_cast<unsigned>(m); }

// --one-call KIND P M N: one call in this fresh process and a fresh workspace; prints its seconds.
int one_call(const std::vector<std::string> &a)
{
    const int p = std::stoi(a[1]), m = std::stoi(a[2]);
    const hetpu::Granules n = parse_granules(a[3]);
    const auto profs = make_profiles(p, m, seed_of(p, m));
    const auto t0 = std::chrono::steady_clock::now();
    hetpu::ParetoWorkspace ws;
    if (a[0] == "hpopta")
        hetpu::hpopta(profs, n, ws);
    else
        hetpu::hepopta(profs, n, ws);
    std::printf("%.9f\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 0;
}

// Median over `reps` fresh processes of one_call's time.
double first_call_s(const std::string &kind, int p, int m, hetpu::Granules n, int reps)
{
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return -1;
    self[len] = '\0';
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const std::string cmd = std::string("'") + self + "' --one-call " + kind + " " + std::to_string(p) + " " +
                                std::to_string(m) + " " + std::to_string(n);
        FILE *f = popen(cmd.c_str(), "r");
        double s = -1;
        if (!f || std::fscanf(f, "%lf", &s) != 1)
            s = -1;
        if (f)
            pclose(f);
        t.push_back(s);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Case {
    int p, m, pct;
    hetpu::Granules n;
};

// First calls beside repeated ones (see the file comment): prints the second table and
// appends its JSON lines.
void first_call_table(const std::vector<Case> &cases, int reps, std::vector<std::string> &json)
{
    std::printf("\n%3s %4s %5s %6s | %9s %9s %9s %9s %6s | %9s %9s %9s %9s %6s\n", "p", "m", "load", "n", "hp_first",
                "hp_no_ws", "hp_kept", "hp_varied", "ratio", "he_first", "he_no_ws", "he_kept", "he_varied", "ratio");
    const int rep_calls = std::max(reps, 5);
    for (const Case &c : cases) {
        const auto profs = make_profiles(c.p, c.m, seed_of(c.p, c.m));
        double first[2], no_ws[2], kept[2], varied[2];
        for (int k = 0; k < 2; ++k) {
            const bool hp = k == 0;
            auto call = [&](hetpu::ParetoWorkspace *ws, hetpu::Granules n) {
                if (hp)
                    ws ? hetpu::hpopta(profs, n, *ws) : hetpu::hpopta(profs, n);
                else
                    ws ? hetpu::hepopta(profs, n, *ws) : hetpu::hepopta(profs, n);
            };
            first[k] = first_call_s(hp ? "hpopta" : "hepopta", c.p, c.m, c.n, reps);
            no_ws[k] = median_s(rep_calls, [&] { call(nullptr, c.n); });
            hetpu::ParetoWorkspace ws;
            call(&ws, c.n);  // warm-up: the workspace grows to this instance
            kept[k] = median_s(rep_calls, [&] { call(&ws, c.n); });
            hetpu::Granules n = c.n;
            varied[k] = median_s(rep_calls, [&] { call(&ws, --n); });
        }
        std::printf("%3d %4d %4d%% %6lld | %9.3f %9.3f %9.3f %9.3f %6.2f | %9.2f %9.2f %9.2f %9.2f %6.2f\n", c.p, c.m,
                    c.pct, static_cast<long long>(c.n), 1e3 * first[0], 1e3 * no_ws[0], 1e3 * kept[0], 1e3 * varied[0],
                    first[0] / varied[0], 1e3 * first[1], 1e3 * no_ws[1], 1e3 * kept[1], 1e3 * varied[1],
                    first[1] / varied[1]);
        std::fflush(stdout);
        json.push_back(hetpu::json_line({{"bench", "pareto_first_call"},
                                         {"p", c.p},
                                         {"m", c.m},
                                         {"load_pct", c.pct},
                                         {"n", static_cast<long long>(c.n)},
                                         {"hpopta_first_s", first[0]},
                                         {"hpopta_no_workspace_s", no_ws[0]},
                                         {"hpopta_kept_workspace_s", kept[0]},
                                         {"hpopta_kept_varied_s", varied[0]},
                                         {"hepopta_first_s", first[1]},
                                         {"hepopta_no_workspace_s", no_ws[1]},
                                         {"hepopta_kept_workspace_s", kept[1]},
                                         {"hepopta_kept_varied_s", varied[1]}}));
    }
    std::printf("(ms; first: median over %d fresh processes of their first call; no_ws, kept: median of %d calls "
                "without / with a kept workspace; varied: kept, n one smaller each call; ratio = first / varied)\n",
                reps, rep_calls);
}

}  // namespace

int main(int argc, char **argv)
{
    std::string config_text;
    int reps = 3;
    CLI::App app{"Time of the HEPOPTA, HTPOPTA and HPOPTA fronts at five workloads per (processors p, sizes m).",
                 "pareto_speed"};
    std::vector<std::string> one;
    app.add_option("--one-call", one, "KIND P M N: time one call in this process (hpopta|hepopta; internal)")
        ->expected(4);
    app.add_option("configs", config_text, "p:m,p:m,... (default 2:500,4:500,8:100,8:200,8:500,16:100,16:200)")
        ->check(CLI::Validator(
            [](std::string &v) -> std::string {
                int p = 0, m = 0, used = 0;
                for (const char *c = v.c_str(); *c;) {
                    if (std::sscanf(c, "%d:%d%n", &p, &m, &used) != 2 || p < 1 || m < 1)
                        return "'" + v + "' is not a list of p:m with p, m >= 1";
                    c += used;
                    if (*c == ',')
                        ++c;
                }
                return "";
            },
            "P:M,..."));
    app.add_option("reps", reps, "repetitions per front (the best counts)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    if (!one.empty())
        return one_call(one);
    std::vector<std::pair<int, int>> configs{{2, 500}, {4, 500}, {8, 100}, {8, 200}, {8, 500}, {16, 100}, {16, 200}};
    if (!config_text.empty()) {
        configs.clear();
        for (const char *c = config_text.c_str(); *c;) {
            int p = 0, m = 0, used = 0;
            std::sscanf(c, "%d:%d%n", &p, &m, &used);
            configs.emplace_back(p, m);
            c += used;
            if (*c == ',')
                ++c;
        }
    }
    const double base_power_w = 50.0;

    std::printf("%3s %4s %5s %6s %5s | %9s %9s %9s %8s | %s\n", "p", "m", "load", "n", "front", "hpopta_s", "hepopta_s",
                "htpopta_s", "MiB", "fastest=hpopta");
    std::vector<std::string> json;
    bool all_ok = true;
    std::vector<Case> cases;
    for (auto [p, m] : configs) {
        const auto profs = make_profiles(p, m, seed_of(p, m));
        hetpu::Granules capacity = 0;
        for (const auto &prof : profs)
            capacity += prof.points.back().size;
        for (int pct : {10, 30, 50, 70, 90}) {
            hetpu::Granules n = capacity * pct / 100;
            while (n > 0) {
                try {
                    hetpu::hpopta(profs, n);
                    break;
                } catch (const hetpu::UnreachableWorkloadError &) {
                    --n;
                }
            }
            cases.push_back(Case{p, m, pct, n});
            std::vector<hetpu::Distribution> front, tfront;
            hetpu::Distribution optimal;
            hetpu::ParetoStats st;
            const Measure hp = measure(reps, [&] { optimal = hetpu::hpopta(profs, n); });
            const Measure he = measure(reps, [&] { front = hetpu::hepopta(profs, n, &st); });
            const Measure ht = measure(reps, [&] { tfront = hetpu::htpopta(profs, n, base_power_w); });
            const bool ok = fastest_is_optimal(front, optimal) && fastest_is_optimal(tfront, optimal);
            all_ok = all_ok && ok;
            const std::size_t bytes = std::max({hp.bytes, he.bytes, ht.bytes});
            const double mib = 1024.0 * 1024.0;
            std::printf("%3d %4d %4d%% %6lld %5zu | %9.5f %9.4f %9.4f %8.2f | %s\n", p, m, pct,
                        static_cast<long long>(n), front.size(), hp.s, he.s, ht.s, bytes / mib, ok ? "yes" : "NO");
            std::fflush(stdout);
            json.push_back(
                hetpu::json_line({{"bench", "pareto_speed"},
                                  {"p", p},
                                  {"m", m},
                                  {"load_pct", pct},
                                  {"n", static_cast<long long>(n)},
                                  {"front", front.size()},
                                  {"total_front", tfront.size()},
                                  {"hpopta_s", hp.s},
                                  {"hepopta_s", he.s},
                                  {"htpopta_s", ht.s},
                                  {"peak_bytes", bytes},
                                  {"cells", static_cast<long long>(st.cells_built)},
                                  {"candidates", static_cast<long long>(st.candidates)},
                                  {"table_bytes", static_cast<long long>(st.table_bytes)},
                                  {"fastest_is_hpopta", ok},
                                  {"cpu", {{"hpopta_s", hp.cpu}, {"hepopta_s", he.cpu}, {"htpopta_s", ht.cpu}}}}));
        }
    }
    first_call_table(cases, reps, json);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("process peak RSS: %.1f MiB\n", ru.ru_maxrss / 1024.0);
    for (const std::string &l : json)
        std::printf("%s\n", l.c_str());
    return all_ok ? 0 : 1;
}
