// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/owned_lender.h"

#ifdef HETPU_HAVE_MPI

#include <starpu_mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "runtime/mpi/core/range_moves.h"

namespace hetpu {

uint64_t Lender::give(const WireGive &g)
{
    Run &run = rank_.run;
    Block tail;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        if (!rank_.stopped)
            tail = run.dispatcher->take_tail(
                g.count, [&](const Block &back) { return may_lend(back, rank_.share, rank_.stopped); });
    }
    if (tail.count == 0)
        return 0;
    Lent lent;
    int rc = register_block_buffers(rank_.job, tail.offset, tail.count, lent.buffers);
    if (rc != 0) {
        unregister_all(lent.buffers);
        std::fprintf(stderr, "hetpu: %s: rank %d cannot lend [%llu, %llu): %s\n", rank_.label(), rank_.rank,
                     (unsigned long long)tail.offset, (unsigned long long)(tail.offset + tail.count),
                     std::strerror(-rc));
        std::lock_guard<std::mutex> lock(run.mutex);
        run.dispatcher->put_back(tail);
        if (run.error == 0)
            run.error = rc;
        return 0;
    }
    lent.pending = lent.buffers.count_outbound();
    rank_.traffic.data_sent += lent.buffers.inbound_bytes();
    rank_.traffic.data_received += lent.buffers.outbound_bytes();
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        rank_.handed -= tail.count;
        if (lent.pending == 0)
            home_.push_back(g.move);
        lent_[g.move] = std::move(lent);
    }
    const BlockBuffers &kept = lent_.at(g.move).buffers;
    for (size_t i = 0; i < kept.handles.size(); ++i) {
        if (kept.inbound[i])
            starpu_mpi_isend_detached(kept.handles[i], g.to, move_tag(g.move, false, kept.index[i]), MPI_COMM_WORLD,
                                      nullptr, nullptr);
        if (kept.outbound[i])
            starpu_mpi_irecv_detached(kept.handles[i], g.to, move_tag(g.move, true, kept.index[i]), MPI_COMM_WORLD,
                                      &Lender::result_arrived, new Arrival{this, g.move});
    }
    WireTake t{g.move, rank_.rank, 0, tail.offset, tail.count};
    rank_.send(t, g.to, kTagTake);
    return tail.count;
}

void Lender::result_arrived(void *arg)
{
    std::unique_ptr<Arrival> a(static_cast<Arrival *>(arg));
    Lender &l = *a->lender;
    std::lock_guard<std::mutex> lock(l.rank_.run.mutex);
    auto it = l.lent_.find(a->move);
    if (it != l.lent_.end() && --it->second.pending == 0)
        l.home_.push_back(a->move);
    l.rank_.run.changed.notify_all();
}

bool Lender::settle_returns()
{
    std::vector<uint64_t> home;
    {
        std::lock_guard<std::mutex> lock(rank_.run.mutex);
        home.swap(home_);
    }
    for (uint64_t move : home) {
        unregister_all(lent_.at(move).buffers);  // the results are in this rank's memory
        std::lock_guard<std::mutex> lock(rank_.run.mutex);
        lent_.erase(move);
    }
    return !home.empty();
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
