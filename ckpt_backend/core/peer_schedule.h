// SPDX-License-Identifier: LGPL-2.1-or-later
// Checkpoint load balancing across the memory nodes of one machine (seed slides 15-17, 46,
// 49, 60-61; A. Maurya, B. Nicolae, M. M. Rafique, T. Tonellot and F. Cappello, "Towards
// Efficient I/O Scheduling for Collaborative Multi-Level Checkpointing", MASCOTS 2021).
//
// Each device i must write a checkpoint larger than its free cache: the remainder r_i goes
// elsewhere. Devices with spare cache s_j accept data over direct links (bandwidth bw_ij) and
// every device can write to the host (bw_iH). Each link has its own copy engine, so all
// transfers run concurrently and a link carrying x bytes is busy x / bw seconds. The group
// is blocked until the slowest link finishes: minimise the bottleneck time
//     T = max over links of x_ij / bw_ij
// subject to: each device ships exactly r_i, each peer receives at most s_j, the host at most
// its spare. Data goes one hop (no relaying through a peer).
//
// Min-time max-flow: for a time T the question "can everything ship within T" is a max-flow
// with link capacities bw_ij * T; the flow value is a concave piecewise-linear function of T
// (the minimum over cuts of a_C + b_C T). The exact optimum is found by Newton's method on
// those cuts (each step jumps to where the current minimum cut stops binding; finitely many
// cuts, so finitely many steps; T. Radzik, "Newton's method for fractional combinatorial
// optimization", bounds them polynomially), then snapped to whole bytes: the smallest T of the
// form k / bw_e whose integer-capacity max-flow ships everything. It lies within one
// byte-time of the slowest link above the continuous optimum; bisection on T narrows that
// window to a few dozen such times whatever the bandwidth ratio (about 40 max-flows at a
// ratio of 1e12), and those few are searched directly.
// Greedy (slide 16) and local-only (slide 15) are the baselines.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace hetpu::ckpt {

struct PeerProblem {
    std::vector<std::uint64_t> remainder;      // bytes device i cannot keep locally
    std::vector<std::uint64_t> spare;          // free cache bytes on device i
    std::vector<std::vector<double>> link_bw;  // [i][j] bytes/s from i to j (0: no link)
    std::vector<double> host_bw;               // bytes/s from device i to host (0: no link)
    std::uint64_t host_spare = std::numeric_limits<std::uint64_t>::max();
};

constexpr int kHost = -1;

struct Transfer {
    int from;  // device index
    int to;    // device index or kHost
    std::uint64_t bytes;
};

struct PeerSchedule {
    bool feasible = false;  // false: not enough reachable capacity for the remainders
    std::vector<Transfer> transfers;
    double time = 0;  // bottleneck seconds
};

// Checks the problem's shape; throws std::invalid_argument naming the inconsistency.
void validate(const PeerProblem &p);
// Bottleneck time of a transfer list (links summed; concurrent links take the maximum).
double bottleneck_time(const PeerProblem &p, const std::vector<Transfer> &transfers);
// The exact continuous optimum T* (for reporting and tests); infinity when infeasible.
double min_time_continuous(const PeerProblem &p);

PeerSchedule schedule_min_time_max_flow(const PeerProblem &p);
PeerSchedule schedule_greedy(const PeerProblem &p);
PeerSchedule schedule_local_only(const PeerProblem &p);

}  // namespace hetpu::ckpt
