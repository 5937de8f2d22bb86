// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/peer_schedule.h"

#include "ckpt_backend/core/max_flow.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace hetpu::ckpt {

void validate(const PeerProblem &p)
{
    const std::size_t n = p.remainder.size();
    auto fail = [](const std::string &what) { throw std::invalid_argument("peer problem: " + what); };
    if (p.spare.size() != n)
        fail("spare has " + std::to_string(p.spare.size()) + " entries, remainder " + std::to_string(n));
    if (p.host_bw.size() != n)
        fail("host_bw needs one entry per device");
    if (p.link_bw.size() != n)
        fail("link_bw needs one row per device");
    std::uint64_t total = 0;
    for (std::uint64_t r : p.remainder)
        if (__builtin_add_overflow(total, r, &total) || total > (std::uint64_t{1} << 60))
            fail("the remainders sum to more than 2^60 bytes");
    for (std::size_t i = 0; i < n; ++i) {
        if (p.link_bw[i].size() != n)
            fail("link_bw row " + std::to_string(i) + " is not n wide");
        if (p.host_bw[i] < 0)
            fail("negative host bandwidth for device " + std::to_string(i));
        for (double bw : p.link_bw[i])
            if (bw < 0)
                fail("negative link bandwidth from device " + std::to_string(i));
    }
}

double bottleneck_time(const PeerProblem &p, const std::vector<Transfer> &transfers)
{
    std::map<std::pair<int, int>, std::uint64_t> per_link;
    for (const Transfer &t : transfers)
        per_link[{t.from, t.to}] += t.bytes;
    double worst = 0;
    for (const auto &[link, bytes] : per_link) {
        if (bytes == 0)
            continue;
        double bw = link.second == kHost ? p.host_bw[link.first] : p.link_bw[link.first][link.second];
        worst = std::max(worst, bw > 0 ? bytes / bw : INFINITY);
    }
    return worst;
}

namespace {

// Flow network: source, sender i, receiver j, host, sink. Senders and receivers are separate
// nodes so that no path relays through a peer.
struct Network {
    int n, source, host, sink;
    explicit Network(int devices) : n(devices), source(0), host(2 * devices + 1), sink(2 * devices + 2) {}
    int sender(int i) const { return 1 + i; }
    int receiver(int j) const { return 1 + n + j; }
    int nodes() const { return 2 * n + 3; }
};

struct LinkEdge {
    int from, to;
    double bw;
    int edge;
};

// Builds the network for time T with capacities mapped by `cap` (bw*T -> capacity).
template <typename Cap, typename CapOf>
std::vector<LinkEdge> build(const PeerProblem &p, const Network &net, MaxFlow<Cap> &flow, CapOf cap_of)
{
    std::vector<LinkEdge> links;
    const Cap inf_cap = std::numeric_limits<Cap>::max() / 4;
    for (int i = 0; i < net.n; ++i) {
        if (p.remainder[i] > 0) {
            flow.add_edge(net.source, net.sender(i), static_cast<Cap>(p.remainder[i]));
            for (int j = 0; j < net.n; ++j)
                if (j != i && p.link_bw[i][j] > 0 && p.spare[j] > 0 && p.remainder[j] == 0)
                    links.push_back({i, j, p.link_bw[i][j],
                                     flow.add_edge(net.sender(i), net.receiver(j), cap_of(p.link_bw[i][j]))});
            if (p.host_bw[i] > 0)
                links.push_back({i, kHost, p.host_bw[i], flow.add_edge(net.sender(i), net.host, cap_of(p.host_bw[i]))});
        }
        if (p.spare[i] > 0 && p.remainder[i] == 0)
            flow.add_edge(net.receiver(i), net.sink, static_cast<Cap>(p.spare[i]));
    }
    const bool unlimited = p.host_spare == std::numeric_limits<std::uint64_t>::max() ||
                           static_cast<double>(p.host_spare) >= static_cast<double>(inf_cap);
    const Cap host_cap = unlimited ? inf_cap : static_cast<Cap>(p.host_spare);
    flow.add_edge(net.host, net.sink, host_cap);
    return links;
}

std::uint64_t total_remainder(const PeerProblem &p)
{
    return std::accumulate(p.remainder.begin(), p.remainder.end(), std::uint64_t{0});
}

// Whole-byte capacity of a link of bandwidth bw within time T (tolerant to the rounding of
// k / bw * bw landing just below k).
std::int64_t byte_cap(double bw, double T)
{
    // Beyond 2^61 bytes a link is never the limit (the remainders sum to less): capping
    // keeps the capacity, and the max-flow's sums, within 64 bits at any bandwidth ratio.
    constexpr double kUnlimited = static_cast<double>(std::int64_t{1} << 61);
    const double x = bw * T;
    return static_cast<std::int64_t>(std::min(kUnlimited, std::floor(x + 1e-9 * std::max(1.0, x))));
}

// Integer max-flow at time T; fills transfers when everything ships.
bool ships_all(const PeerProblem &p, double T, std::vector<Transfer> *out)
{
    Network net(static_cast<int>(p.remainder.size()));
    MaxFlow<std::int64_t> flow(net.nodes());
    auto links = build<std::int64_t>(p, net, flow, [T](double bw) { return byte_cap(bw, T); });
    std::int64_t shipped = flow.run(net.source, net.sink);
    if (static_cast<std::uint64_t>(shipped) != total_remainder(p))
        return false;
    if (out) {
        out->clear();
        for (const LinkEdge &l : links) {
            std::int64_t f = flow.flow_on(l.edge);
            if (f > 0)
                out->push_back({l.from, l.to, static_cast<std::uint64_t>(f)});
        }
    }
    return true;
}

// Bandwidths of the links that may carry data (from a device with a remainder).
std::vector<double> sending_bandwidths(const PeerProblem &p)
{
    std::vector<double> bws;
    const std::size_t n = p.remainder.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (p.remainder[i] == 0)
            continue;
        if (p.host_bw[i] > 0)
            bws.push_back(p.host_bw[i]);
        for (std::size_t j = 0; j < n; ++j)
            if (p.link_bw[i][j] > 0)
                bws.push_back(p.link_bw[i][j]);
    }
    return bws;
}

// The bisection stops when this few whole-byte times lie between its bounds; the search
// that follows lists at most kMaxCandidates of them (bounded memory at any ratio).
constexpr double kFewByteTimes = 64;
constexpr std::size_t kMaxCandidates = 4096;

// How many times k / bw (k whole, over every link) lie in (lo, up].
double byte_times_between(const std::vector<double> &bws, double lo, double up)
{
    double count = 0;
    for (double bw : bws)
        count += std::floor(bw * up) - std::floor(bw * lo);
    return count;
}

}  // namespace

double min_time_continuous(const PeerProblem &p)
{
    validate(p);
    const double F = static_cast<double>(total_remainder(p));
    if (F == 0)
        return 0;
    Network net(static_cast<int>(p.remainder.size()));
    double T = 0;
    for (int iteration = 0; iteration < 10000; ++iteration) {
        MaxFlow<double> flow(net.nodes(), 1e-9);
        auto links = build<double>(p, net, flow, [T](double bw) { return bw * T; });
        double value = flow.run(net.source, net.sink);
        if (value >= F * (1 - 1e-12) - 1e-9)
            return T;
        // Minimum cut (a + b T): a = constant edges crossing, b = link bandwidths crossing.
        std::vector<bool> side = flow.source_side(net.source);
        double a = 0, b = 0;
        for (int i = 0; i < net.n; ++i) {
            if (p.remainder[i] > 0 && !side[net.sender(i)])
                a += p.remainder[i];
            if (p.spare[i] > 0 && p.remainder[i] == 0 && side[net.receiver(i)])
                a += p.spare[i];
        }
        if (side[net.host])
            a += static_cast<double>(p.host_spare);  // huge when unlimited
        for (const LinkEdge &l : links) {
            int to = l.to == kHost ? net.host : net.receiver(l.to);
            if (side[net.sender(l.from)] && !side[to])
                b += l.bw;
        }
        if (b <= 0)
            return INFINITY;  // this cut does not grow with time: capacity is short
        const double next = (F - a) / b;
        // In exact arithmetic Newton stops on the cut that binds at T; in doubles that cut's
        // flow may miss F by a rounding error, and the step then barely moves: T is the
        // optimum to within that rounding.
        if (!(next > T * (1 + 1e-12)))
            return std::max(T, next);
        T = next;
    }
    return T;
}

PeerSchedule schedule_min_time_max_flow(const PeerProblem &p)
{
    PeerSchedule s;
    const double t_star = min_time_continuous(p);
    if (std::isinf(t_star))
        return s;
    if (total_remainder(p) == 0) {
        s.feasible = true;
        return s;
    }
    // The whole-byte optimum is the smallest time k / bw_e (a link's byte count changes only
    // there) at which the integer max-flow ships everything; t_star + one byte-time of the
    // slowest link is feasible (every capacity is then at least its continuous value at
    // t_star). Between the two there may be up to (fastest / slowest bandwidth) such times,
    // 1e12 at extreme ratios: they are never listed. Feasibility is monotone in T and the
    // times of each link are evenly spaced, so halving the interval halves every link's count;
    // bisection on T stops once only a few remain, and those are then searched one by one.
    std::vector<double> bws = sending_bandwidths(p);
    const double min_bw = *std::min_element(bws.begin(), bws.end());
    double lo = t_star, up = t_star + 1.0 / min_bw;
    if (ships_all(p, lo, nullptr))
        up = lo;
    for (int widen = 0; widen < 64 && !ships_all(p, up, nullptr); ++widen)
        up += (up - lo) + 1.0 / min_bw;  // t_star's rounding: never seen, bounded anyway
    for (int step = 0; step < 200 && byte_times_between(bws, lo, up) > kFewByteTimes; ++step) {
        const double mid = lo + (up - lo) / 2;
        if (!(mid > lo && mid < up))
            break;  // the interval is one double wide
        (ships_all(p, mid, nullptr) ? up : lo) = mid;
    }
    std::vector<double> candidates{up};
    if (up > lo)
        for (double bw : bws) {
            double k = std::floor(bw * lo) + 1;
            for (std::size_t listed = 0; listed < kMaxCandidates && candidates.size() < kMaxCandidates && k / bw < up;
                 ++listed, k += 1)
                if (k / bw > lo)
                    candidates.push_back(k / bw);
        }
    std::sort(candidates.begin(), candidates.end());
    std::size_t first = 0, last = candidates.size() - 1;  // candidates[last] ships everything
    while (first < last) {
        const std::size_t mid = (first + last) / 2;
        if (ships_all(p, candidates[mid], nullptr))
            last = mid;
        else
            first = mid + 1;
    }
    up = candidates[last];
    s.feasible = ships_all(p, up, &s.transfers);
    s.time = bottleneck_time(p, s.transfers);
    return s;
}

PeerSchedule schedule_greedy(const PeerProblem &p)
{
    validate(p);
    PeerSchedule s;
    const int n = static_cast<int>(p.remainder.size());
    std::vector<std::uint64_t> spare = p.spare;
    std::uint64_t host_spare = p.host_spare;
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    // The device with the largest remainder blocks the group longest: serve it first.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p.remainder[a] > p.remainder[b]; });
    s.feasible = true;
    for (int i : order) {
        std::uint64_t left = p.remainder[i];
        if (left == 0)
            continue;
        std::vector<int> peers;
        for (int j = 0; j < n; ++j)
            if (j != i && p.link_bw[i][j] > 0 && p.remainder[j] == 0)
                peers.push_back(j);
        std::stable_sort(peers.begin(), peers.end(), [&](int a, int b) { return p.link_bw[i][a] > p.link_bw[i][b]; });
        for (int j : peers) {
            if (left == 0)
                break;
            std::uint64_t put = std::min(left, spare[j]);
            if (put == 0)
                continue;
            s.transfers.push_back({i, j, put});
            spare[j] -= put;
            left -= put;
        }
        if (left > 0) {
            std::uint64_t put = p.host_bw[i] > 0 ? std::min(left, host_spare) : 0;
            if (put > 0) {
                s.transfers.push_back({i, kHost, put});
                host_spare -= put;
                left -= put;
            }
            if (left > 0)
                s.feasible = false;
        }
    }
    s.time = bottleneck_time(p, s.transfers);
    return s;
}

PeerSchedule schedule_local_only(const PeerProblem &p)
{
    validate(p);
    PeerSchedule s;
    s.feasible = true;
    std::uint64_t host_spare = p.host_spare;
    for (std::size_t i = 0; i < p.remainder.size(); ++i) {
        if (p.remainder[i] == 0)
            continue;
        if (p.host_bw[i] <= 0 || host_spare < p.remainder[i]) {
            s.feasible = false;
            continue;
        }
        s.transfers.push_back({static_cast<int>(i), kHost, p.remainder[i]});
        host_spare -= p.remainder[i];
    }
    s.time = bottleneck_time(p, s.transfers);
    return s;
}

}  // namespace hetpu::ckpt
