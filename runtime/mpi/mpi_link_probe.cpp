// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/mpi_link_probe.h"

#ifdef HETPU_HAVE_MPI

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/settings.h"
#include "runtime/mpi/core/link_probe.h"

namespace hetpu {
namespace {

constexpr int kProbeTag = 7301;  // hetpu's control communicator carries nothing else now

double now_s() { return MPI_Wtime(); }

// The sender's side of one pair: one-byte round trips, then bulk messages each answered
// by one byte, then an empty message that ends the pair. Returns the pair's link.
NodeLink send_probe(MPI_Comm comm, int peer, std::vector<char> &buffer, ProbedLinks &counts)
{
    const LinkProbeSizes sizes;
    char ack = 0;
    std::vector<double> rtts;
    for (int i = 0; i <= sizes.pings; ++i) {  // the first one warms the connection up
        const double t0 = now_s();
        MPI_Send(buffer.data(), 1, MPI_CHAR, peer, kProbeTag, comm);
        MPI_Recv(&ack, 1, MPI_CHAR, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
        counts.bytes_sent += 1;
        counts.bytes_received += 1;
        if (i > 0)
            rtts.push_back(now_s() - t0);
    }
    // One bulk message of `bytes`, answered by one byte: its round trip.
    auto timed = [&](uint64_t bytes) {
        if (buffer.size() < bytes)
            buffer.resize(bytes);
        const double t0 = now_s();
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, peer, kProbeTag, comm);
        MPI_Recv(&ack, 1, MPI_CHAR, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
        counts.bytes_sent += bytes;
        counts.bytes_received += 1;
        return now_s() - t0;
    };
    uint64_t bytes = sizes.first_bytes;
    while (!probe_doubling_ends(sizes, bytes, timed(bytes)))
        bytes *= 2;
    LinkSample fastest{2.0 * static_cast<double>(bytes), 1e300};
    for (int i = 0; i < sizes.repeats; ++i)
        fastest.seconds = std::min(fastest.seconds, timed(2 * bytes));
    MPI_Send(buffer.data(), 0, MPI_CHAR, peer, kProbeTag, comm);
    const NodeLink link = pair_link(rtts, fastest);
    const double both[2] = {link.latency_s, link.bytes_per_s};
    MPI_Send(both, 2, MPI_DOUBLE, peer, kProbeTag, comm);
    counts.bytes_sent += sizeof both;
    return link;
}

// The answering side: echoes one byte per message until the empty one, then learns the
// pair's link from the sender.
NodeLink answer_probe(MPI_Comm comm, int peer, std::vector<char> &buffer, ProbedLinks &counts)
{
    char ack = 0;
    for (;;) {
        MPI_Status status;
        MPI_Probe(peer, kProbeTag, comm, &status);
        int count = 0;
        MPI_Get_count(&status, MPI_CHAR, &count);
        if (buffer.size() < static_cast<size_t>(count))
            buffer.resize(static_cast<size_t>(count));
        MPI_Recv(buffer.data(), count, MPI_CHAR, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
        counts.bytes_received += static_cast<uint64_t>(count);
        if (count == 0)
            break;
        MPI_Send(&ack, 1, MPI_CHAR, peer, kProbeTag, comm);
        counts.bytes_sent += 1;
    }
    double both[2] = {0, 0};
    MPI_Recv(both, 2, MPI_DOUBLE, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
    counts.bytes_received += sizeof both;
    return NodeLink{both[0], both[1]};
}

}  // namespace

ProbedLinks probe_links(MPI_Comm comm)
{
    ProbedLinks result;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    // Once per process: the links do not change between the jobs of one run (k-means' passes
    // are jobs), and every rank runs the same jobs in the same order, so all of them probe
    // in the first and reuse it after.
    static bool probed = false;
    static std::vector<NodeLink> known;
    if (probed) {
        result.links = known;
        return result;
    }
    NodeLink mine;
    if (Settings().flag_or("HETPU_MPI_LINK_PROBE", true)) {
        std::vector<NodeLink> pairs;
        std::vector<char> buffer(1);
        for (const auto &round : link_probe_rounds(size)) {
            for (const LinkPair &p : round) {
                if (p.first == rank)
                    pairs.push_back(send_probe(comm, p.second, buffer, result));
                else if (p.second == rank)
                    pairs.push_back(answer_probe(comm, p.first, buffer, result));
            }
            MPI_Barrier(comm);  // the next round's pairs measure alone on their links
        }
        mine = node_link_from_pairs(pairs);
    }
    const double wire[2] = {mine.latency_s, mine.bytes_per_s};
    std::vector<double> all(rank == 0 ? 2 * static_cast<size_t>(size) : 0);
    MPI_Gather(wire, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, comm);
    for (size_t r = 0; rank == 0 && r < static_cast<size_t>(size); ++r)
        result.links.push_back(NodeLink{all[2 * r], all[2 * r + 1]});
    known = result.links;
    probed = true;
    return result;
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
