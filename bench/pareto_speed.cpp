// Speed of the exact Pareto cores (HPOPTA, HEPOPTA, HTPOPTA) on random non-monotone
// profiles: p = 2..8 processors, m = 50..500 points per profile, fixed seed. Prints a
// human table on stderr-free stdout followed by one JSON line per configuration.
//
// Instance: processor i has m distinct sizes drawn from 1..2m granules (so sizes are
// missing), time t(x) = a_i x (0.6 + 0.8 u) and dynamic energy e(x) = b_i x (0.6 + 0.8 u')
// with fresh uniform u, u' per point (non-monotone, non-convex), a_i, b_i spread 1:8 so
// the processors differ; workload n = p * m granules (about half the capacity).
// Usage: pareto_speed [max_p] [max_m]   (defaults 8 500)
#include "sched_policies/core/hepopta.h"
#include "sched_policies/core/hpopta.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
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

template <typename F> double seconds(F &&f)
{
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char **argv)
{
    const int max_p = argc > 1 ? std::atoi(argv[1]) : 8;
    const int max_m = argc > 2 ? std::atoi(argv[2]) : 500;
    const double base_power_w = 50.0;
    std::vector<int> ms;
    for (int m : {50, 100, 200, 300, 500})
        if (m <= max_m)
            ms.push_back(m);

    std::printf("%3s %4s %6s %7s %7s %10s %10s %10s %10s %12s\n", "p", "m", "n", "front", "tfront",
                "hpopta_s", "hepopta_s", "htpopta_s", "cells", "candidates");
    std::vector<std::string> json;
    for (int p = 2; p <= max_p; ++p)
        for (int m : ms) {
            const auto profs = make_profiles(p, m, 20240601u + 1000u * p + m);
            const hetpu::Granules n = static_cast<hetpu::Granules>(p) * m;
            hetpu::ParetoStats st;
            std::vector<hetpu::Distribution> front, tfront;
            const double t_hp = seconds([&] { hetpu::hpopta(profs, n); });
            const double t_he = seconds([&] { front = hetpu::hepopta(profs, n, &st); });
            const double t_ht = seconds([&] { tfront = hetpu::htpopta(profs, n, base_power_w); });
            std::printf("%3d %4d %6lld %7zu %7zu %10.4f %10.4f %10.4f %10lld %12lld\n", p, m,
                        static_cast<long long>(n), front.size(), tfront.size(), t_hp, t_he, t_ht,
                        static_cast<long long>(st.cells_built), static_cast<long long>(st.candidates));
            char line[512];
            std::snprintf(line, sizeof line,
                          "{\"bench\":\"pareto_speed\",\"p\":%d,\"m\":%d,\"n\":%lld,\"front\":%zu,"
                          "\"total_front\":%zu,\"hpopta_s\":%.6f,\"hepopta_s\":%.6f,\"htpopta_s\":%.6f,"
                          "\"cells\":%lld,\"memo_hits\":%lld,\"cuts\":%lld,\"candidates\":%lld}",
                          p, m, static_cast<long long>(n), front.size(), tfront.size(), t_hp, t_he, t_ht,
                          static_cast<long long>(st.cells_built), static_cast<long long>(st.memo_hits),
                          static_cast<long long>(st.cuts), static_cast<long long>(st.candidates));
            json.emplace_back(line);
        }
    for (const std::string &l : json)
        std::printf("%s\n", l.c_str());
    return 0;
}
