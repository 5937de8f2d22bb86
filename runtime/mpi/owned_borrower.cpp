// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/owned_borrower.h"

#ifdef HETPU_HAVE_MPI

#include <starpu_mpi.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace hetpu {

void Borrower::take(const WireTake &t, int from)
{
    Run &run = rank_.run;
    const hetpu_divisible_placement &placement = rank_.placement;
    Incoming in;
    in.from = from;
    in.range = {t.offset, t.count};
    int rc = placement.hold ? placement.hold(placement.arg, t.offset, t.count, HETPU_HOLD_BORROWED) : 0;
    if (rc == 0)
        rc = register_block_buffers(rank_.job, t.offset, t.count, in.buffers);
    if (rc != 0) {
        // The lender's inputs and its wait for results must still be answered: the
        // job stops, but without a hang.
        std::fprintf(stderr, "hetpu: %s: rank %d cannot hold [%llu, %llu) lent by rank %d: %s\n", rank_.label(),
                     rank_.rank, (unsigned long long)t.offset, (unsigned long long)(t.offset + t.count), from,
                     std::strerror(rc < 0 ? -rc : rc));
        std::lock_guard<std::mutex> lock(run.mutex);
        if (run.error == 0)
            run.error = rc < 0 ? rc : -rc;
        return;
    }
    in.pending = in.buffers.count_inbound();
    rank_.traffic.data_received += in.buffers.inbound_bytes();
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        incoming_[t.move] = std::move(in);
        if (incoming_[t.move].pending == 0)
            inputs_in_.push_back(t.move);
    }
    const BlockBuffers &b = incoming_.at(t.move).buffers;
    for (size_t i = 0; i < b.handles.size(); ++i)
        if (b.inbound[i])
            starpu_mpi_irecv_detached(b.handles[i], from, move_tag(t.move, false, b.index[i]), MPI_COMM_WORLD,
                                      &Borrower::input_arrived, new Arrival{this, t.move});
}

void Borrower::input_arrived(void *arg)
{
    std::unique_ptr<Arrival> a(static_cast<Arrival *>(arg));
    Borrower &b = *a->borrower;
    std::lock_guard<std::mutex> lock(b.rank_.run.mutex);
    auto it = b.incoming_.find(a->move);
    if (it != b.incoming_.end() && --it->second.pending == 0)
        b.inputs_in_.push_back(a->move);
    b.rank_.run.changed.notify_all();
}

bool Borrower::settle_arrivals(const std::function<void(uint64_t)> &arrived)
{
    Run &run = rank_.run;
    std::vector<uint64_t> in;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        in.swap(inputs_in_);
    }
    for (uint64_t move : in) {
        Incoming &inc = incoming_.at(move);
        unregister_all(inc.buffers);  // the inputs are in this rank's memory now
        std::vector<Assignment> next;
        {
            std::lock_guard<std::mutex> lock(run.mutex);
            borrowed_.add(move, inc.from, inc.range);
            rank_.handed += inc.range.count;
            if (!rank_.stopped || rank_.stop_status == 0)
                next = run.dispatcher->add_range(inc.range.offset, inc.range.count);
            incoming_.erase(move);
        }
        submit_all(run, next);
        arrived(move);
    }
    return !in.empty();
}

bool Borrower::return_finished_ranges()
{
    Run &run = rank_.run;
    std::vector<Block> homes;
    std::vector<uint64_t> ready;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        homes.swap(run.homes);
        borrowed_.credit(homes);
        const bool abandon = rank_.stopped && rank_.stop_status != 0 && run_settled(run);
        ready = borrowed_.ready(abandon);
    }
    for (uint64_t move : ready) {
        const BorrowedRange b = borrowed_.at(move);
        BlockBuffers out;
        int rc = register_block_buffers(rank_.job, b.range.offset, b.range.count, out);
        if (rc == 0) {
            rank_.traffic.data_sent += out.outbound_bytes();
            for (size_t i = 0; i < out.handles.size(); ++i)
                if (out.outbound[i])
                    starpu_mpi_isend_detached(out.handles[i], b.from, move_tag(move, true, out.index[i]),
                                              MPI_COMM_WORLD, nullptr, nullptr);
        } else {
            std::fprintf(stderr, "hetpu: %s: rank %d cannot send the results of [%llu, %llu) back to rank %d: %s\n",
                         rank_.label(), rank_.rank, (unsigned long long)b.range.offset,
                         (unsigned long long)(b.range.offset + b.range.count), b.from, std::strerror(-rc));
        }
        unregister_all(out);  // waits for the sends
        std::lock_guard<std::mutex> lock(run.mutex);
        borrowed_.erase(move);
        to_release_.push_back(b.range);
        if (rc != 0 && run.error == 0)
            run.error = rc;
    }
    const bool released = release_idle_ranges();
    return !homes.empty() || !ready.empty() || released;
}

bool Borrower::release_idle_ranges()
{
    std::vector<Block> idle;
    {
        std::lock_guard<std::mutex> lock(rank_.run.mutex);
        for (auto it = to_release_.begin(); it != to_release_.end();)
            if (rank_.run.tasks.any_in(it->offset, it->count)) {
                ++it;
            } else {
                idle.push_back(*it);
                it = to_release_.erase(it);
            }
    }
    if (rank_.placement.release)
        for (const Block &b : idle)
            rank_.placement.release(rank_.placement.arg, b.offset, b.count);
    return !idle.empty();
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
