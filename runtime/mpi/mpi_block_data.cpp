// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/mpi_block_data.h"

#ifdef HETPU_HAVE_MPI

#include <cerrno>

#include "runtime/divisible/block_run.h"

namespace hetpu {

unsigned BlockBuffers::count_inbound() const
{
    unsigned n = 0;
    for (bool b : inbound)
        n += b ? 1 : 0;
    return n;
}

unsigned BlockBuffers::count_outbound() const
{
    unsigned n = 0;
    for (bool b : outbound)
        n += b ? 1 : 0;
    return n;
}

uint64_t BlockBuffers::inbound_bytes() const
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < handles.size(); ++i)
        if (inbound[i])
            bytes += starpu_data_get_size(handles[i]);
    return bytes;
}

uint64_t BlockBuffers::outbound_bytes() const
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < handles.size(); ++i)
        if (outbound[i])
            bytes += starpu_data_get_size(handles[i]);
    return bytes;
}

int block_buffers(const hetpu_divisible_job &job, struct starpu_task *task, BlockBuffers &out)
{
    const unsigned nbuffers = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
    for (unsigned i = 0; i < nbuffers && i < 32; ++i) {
        if (!(job.block_handle_mask & (1u << i)))
            continue;
        const enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
        if (!(mode & (STARPU_R | STARPU_W)) || (mode & (STARPU_SCRATCH | STARPU_REDUX)))
            return -ENOTSUP;
        out.handles.push_back(STARPU_TASK_GET_HANDLE(task, i));
        out.index.push_back(i);
        out.inbound.push_back((mode & STARPU_R) != 0);
        out.outbound.push_back((mode & STARPU_W) != 0);
    }
    return 0;
}

int register_block_buffers(const hetpu_divisible_job &job, uint64_t offset, uint64_t count, BlockBuffers &out)
{
    struct starpu_task *task = starpu_task_create();
    int rc = job.fill_task(job.arg, offset, count, task);
    if (rc == 0)
        rc = block_buffers(job, task, out);
    else
        rc = rc < 0 ? rc : -rc;
    discard_unsubmitted(task);
    return rc;
}

void unregister_all(const BlockBuffers &b)
{
    for (starpu_data_handle_t h : b.handles)
        starpu_data_unregister(h);
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
