// SPDX-License-Identifier: LGPL-2.1-or-later
// Speed of the exact Pareto cores (HPOPTA, HEPOPTA, HTPOPTA) on random non-monotone
// profiles, against the previous implementation (bench/pareto_legacy.cpp) measured in the
// same run on the same instances. Prints a human table, then one JSON line per
// (p, m, workload).
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
// Every new front is compared with the previous implementation's, figure for figure.
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
//        pareto_speed --no-legacy [p:m,...] [reps]   (new implementation only)
#include "common/json_line.h"
#include "common/cli_args.h"
#include "bench/pareto_legacy.h"
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

std::atomic<std::size_t> g_live{0}, g_peak{0};

void *counted_alloc(std::size_t size)
{
    // A size header in front of each block lets operator delete subtract what it frees.
    void *raw = std::malloc(size + 16);
    if (!raw)
        throw std::bad_alloc();
    *static_cast<std::size_t *>(raw) = size;
    const std::size_t now = g_live += size;
    std::size_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    return static_cast<char *>(raw) + 16;
}

void counted_free(void *p)
{
    if (!p)
        return;
    char *raw = static_cast<char *>(p) - 16;
    g_live -= *reinterpret_cast<std::size_t *>(raw);
    std::free(raw);
}

}  // namespace

void *operator new(std::size_t size) { return counted_alloc(size); }
void *operator new[](std::size_t size) { return counted_alloc(size); }
void operator delete(void *p) noexcept { counted_free(p); }
void operator delete[](void *p) noexcept { counted_free(p); }
void operator delete(void *p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void *p, std::size_t) noexcept { counted_free(p); }

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
        const std::size_t base = g_live.load();
        g_peak = base;
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_s();
        f();
        out.cpu = std::min(out.cpu, thread_cpu_s() - c0);
        out.s = std::min(out.s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        out.bytes = std::max(out.bytes, g_peak.load() - base);
    }
    return out;
}

bool same_front(const std::vector<hetpu::Distribution> &a, const std::vector<hetpu::Distribution> &b, bool total)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double ea = total ? a[i].total_energy_j : a[i].dynamic_energy_j;
        const double eb = total ? b[i].total_energy_j : b[i].dynamic_energy_j;
        // Both sum energies in processor order; allow for a tie broken the other way.
        if (a[i].time_s != b[i].time_s || std::fabs(ea - eb) > 1e-12 * std::fabs(eb))
            return false;
    }
    return true;
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

}  // namespace

int main(int argc, char **argv)
{
    bool no_legacy = false;
    std::string config_text;
    int reps = 3;
    CLI::App app{"Time of the HEPOPTA, HTPOPTA and HPOPTA fronts at five workloads per (processors p, sizes m), "
                 "against the previous implementation in the same run.",
                 "pareto_speed"};
    app.add_flag("--no-legacy", no_legacy, "skip the previous implementation");
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
    const bool legacy = !no_legacy;
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

    std::printf("%3s %4s %5s %6s %5s | %9s %9s %9s %8s | %9s %9s %9s %8s | %6s %6s %6s %5s\n", "p", "m", "load", "n",
                "front", "hpopta_s", "hepopta_s", "htpopta_s", "new_MiB", "old_hp_s", "old_he_s", "old_ht_s", "old_MiB",
                "x_hp", "x_he", "x_ht", "same");
    std::vector<std::string> json;
    bool all_same = true;
    struct Case {
        int p, m, pct;
        hetpu::Granules n;
    };
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
            std::vector<hetpu::Distribution> front, tfront, old_front, old_tfront;
            hetpu::ParetoStats st;
            const Measure hp = measure(reps, [&] { hetpu::hpopta(profs, n); });
            const Measure he = measure(reps, [&] { front = hetpu::hepopta(profs, n, &st); });
            const Measure ht = measure(reps, [&] { tfront = hetpu::htpopta(profs, n, base_power_w); });
            Measure ohp, ohe, oht;
            bool same = true;
            if (legacy) {
                ohp = measure(reps, [&] { hetpu_legacy::hpopta(profs, n); });
                ohe = measure(reps, [&] { old_front = hetpu_legacy::hepopta(profs, n); });
                oht = measure(reps, [&] { old_tfront = hetpu_legacy::htpopta(profs, n, base_power_w); });
                same = same_front(front, old_front, false) && same_front(tfront, old_tfront, true);
                all_same = all_same && same;
            }
            const std::size_t new_bytes = std::max({hp.bytes, he.bytes, ht.bytes});
            const std::size_t old_bytes = std::max({ohp.bytes, ohe.bytes, oht.bytes});
            const double mib = 1024.0 * 1024.0;
            if (legacy)
                std::printf(
                    "%3d %4d %4d%% %6lld %5zu | %9.5f %9.4f %9.4f %8.2f | %9.5f %9.4f %9.4f %8.2f | %6.1f %6.1f "
                    "%6.1f %5s\n",
                    p, m, pct, static_cast<long long>(n), front.size(), hp.s, he.s, ht.s, new_bytes / mib, ohp.s, ohe.s,
                    oht.s, old_bytes / mib, ohp.s / hp.s, ohe.s / he.s, oht.s / ht.s, same ? "yes" : "NO");
            else
                std::printf("%3d %4d %4d%% %6lld %5zu | %9.5f %9.4f %9.4f %8.2f | (--no-legacy)\n", p, m, pct,
                            static_cast<long long>(n), front.size(), hp.s, he.s, ht.s, new_bytes / mib);
            std::fflush(stdout);
            json.push_back(hetpu::json_line({{"bench", "pareto_speed"},
                                             {"p", p},
                                             {"m", m},
                                             {"load_pct", pct},
                                             {"n", static_cast<long long>(n)},
                                             {"front", front.size()},
                                             {"total_front", tfront.size()},
                                             {"hpopta_s", hp.s},
                                             {"hepopta_s", he.s},
                                             {"htpopta_s", ht.s},
                                             {"peak_bytes", new_bytes},
                                             {"cells", static_cast<long long>(st.cells_built)},
                                             {"candidates", static_cast<long long>(st.candidates)},
                                             {"table_bytes", static_cast<long long>(st.table_bytes)},
                                             {"legacy", legacy},
                                             {"old_hpopta_s", legacy ? ohp.s : 0.0},
                                             {"old_hepopta_s", legacy ? ohe.s : 0.0},
                                             {"old_htpopta_s", legacy ? oht.s : 0.0},
                                             {"old_peak_bytes", old_bytes},
                                             {"same_front", same},
                                             {"cpu",
                                              {{"hpopta_s", hp.cpu},
                                               {"hepopta_s", he.cpu},
                                               {"htpopta_s", ht.cpu},
                                               {"old_hpopta_s", legacy ? ohp.cpu : 0.0},
                                               {"old_hepopta_s", legacy ? ohe.cpu : 0.0},
                                               {"old_htpopta_s", legacy ? oht.cpu : 0.0}}}}));
        }
    }
    // First calls beside repeated ones (see the file comment).
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
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("process peak RSS: %.1f MiB\n", ru.ru_maxrss / 1024.0);
    for (const std::string &l : json)
        std::printf("%s\n", l.c_str());
    return all_same ? 0 : 1;
}
