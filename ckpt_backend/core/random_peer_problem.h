// SPDX-License-Identifier: LGPL-2.1-or-later
// Random peer-balancing problems, for the tests and the benchmark of the peer schedule:
// bandwidths log-uniform between 1e11 / ratio and 1e11 bytes/s, some links missing (30%),
// each device with either a remainder to ship or spare room, from a few bytes to a GiB.
// Pure C++, header-only: nothing in the library uses it.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ckpt_backend/core/peer_schedule.h"

namespace hetpu::ckpt {

struct RandomPeerShape {
    // Some devices without a link to the host (10%), and sometimes a host with limited
    // spare room (30%): the cases a schedule may have to route around.
    bool limited_host = false;
};

inline PeerProblem random_peer_problem(std::mt19937_64 &rng, int n, double ratio, RandomPeerShape shape = {})
{
    std::uniform_real_distribution<double> unit(0, 1);
    auto bw = [&] { return 1e11 * std::pow(ratio, -unit(rng)); };
    auto bytes = [&] { return static_cast<std::uint64_t>(std::pow(2.0, 2 + 28 * unit(rng))); };
    PeerProblem p;
    p.remainder.assign(n, 0);
    p.spare.assign(n, 0);
    p.host_bw.assign(n, 0);
    p.link_bw.assign(n, std::vector<double>(n, 0));
    for (int i = 0; i < n; ++i) {
        (unit(rng) < 0.5 ? p.remainder[i] : p.spare[i]) = bytes();
        if (!shape.limited_host || unit(rng) < 0.9)
            p.host_bw[i] = bw();
        for (int j = 0; j < n; ++j)
            if (j != i && unit(rng) < 0.7)
                p.link_bw[i][j] = bw();
    }
    if (shape.limited_host && unit(rng) < 0.3)
        p.host_spare = bytes();
    return p;
}

}  // namespace hetpu::ckpt
