// SPDX-License-Identifier: LGPL-2.1-or-later
// libFuzzer harness: the min-time max-flow peer schedule on problems read from the input,
// with bandwidths anywhere from 1 to 1e12 bytes/s (any ratio up to 1e12). It must return a
// valid schedule (each remainder shipped exactly, over existing links, within every spare),
// never slower than the greedy one and never faster than the continuous optimum, and must
// never throw or abort (libFuzzer's -timeout and -rss_limit_mb catch a search that runs away).
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <vector>

#include "ckpt_backend/core/peer_schedule.h"

namespace {

struct Reader {
    const uint8_t *data;
    size_t size, at = 0;
    unsigned byte() { return at < size ? data[at++] : 0; }
    // 1 to 1e12 bytes/s, or 0 (no link) for a zero byte.
    double bandwidth()
    {
        const unsigned b = byte();
        return b == 0 ? 0.0 : std::pow(10.0, 12.0 * (b - 1) / 254.0);
    }
    // 0 to about 2^40 bytes.
    std::uint64_t bytes()
    {
        const unsigned e = byte() % 41, m = byte();
        return e == 0 ? 0 : (std::uint64_t{1} << (e - 1)) + m;
    }
};

void check(bool ok)
{
    if (!ok)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace hetpu::ckpt;
    Reader in{data, size};
    const int n = 2 + static_cast<int>(in.byte() % 15);
    PeerProblem p;
    p.remainder.resize(n);
    p.spare.resize(n);
    p.host_bw.resize(n);
    p.link_bw.assign(n, std::vector<double>(n, 0));
    for (int i = 0; i < n; ++i) {
        (in.byte() & 1 ? p.remainder[i] : p.spare[i]) = in.bytes();
        p.host_bw[i] = in.bandwidth();
        for (int j = 0; j < n; ++j)
            if (j != i)
                p.link_bw[i][j] = in.bandwidth();
    }
    if (in.byte() & 1)
        p.host_spare = in.bytes();
    const PeerSchedule s = schedule_min_time_max_flow(p);
    const double continuous = min_time_continuous(p);
    check(s.feasible == !std::isinf(continuous));
    if (!s.feasible)
        return 0;
    std::vector<std::uint64_t> sent(n, 0), got(n, 0);
    std::uint64_t host = 0;
    for (const Transfer &t : s.transfers) {
        check(t.from >= 0 && t.from < n && (t.to == kHost || (t.to >= 0 && t.to < n && t.to != t.from)));
        sent[t.from] += t.bytes;
        if (t.to == kHost) {
            check(p.host_bw[t.from] > 0);
            host += t.bytes;
        } else {
            check(p.link_bw[t.from][t.to] > 0 && p.remainder[t.to] == 0);
            got[t.to] += t.bytes;
        }
    }
    for (int i = 0; i < n; ++i)
        check(sent[i] == p.remainder[i] && got[i] <= p.spare[i]);
    check(host <= p.host_spare);
    check(s.time >= continuous * (1 - 1e-6));
    const PeerSchedule greedy = schedule_greedy(p);
    if (greedy.feasible)
        check(s.time <= greedy.time * (1 + 1e-6));
    return 0;
}
