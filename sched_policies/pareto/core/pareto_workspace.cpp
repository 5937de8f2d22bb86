// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/pareto_workspace.h"

#include "sched_policies/pareto/core/workspace_buffers.h"

namespace hetpu {

ParetoWorkspace::ParetoWorkspace() : buffers_(std::make_unique<detail::WorkspaceBuffers>()) {}
ParetoWorkspace::~ParetoWorkspace() = default;
ParetoWorkspace::ParetoWorkspace(ParetoWorkspace &&) noexcept = default;
ParetoWorkspace &ParetoWorkspace::operator=(ParetoWorkspace &&) noexcept = default;

std::size_t ParetoWorkspace::capacity_bytes() const
{
    if (!buffers_)
        return 0;
    const detail::WorkspaceBuffers &b = *buffers_;
    return b.table.capacity_bytes() + b.fastest.capacity_bytes() + b.min_energy.capacity_bytes() +
           b.bounds.capacity_bytes() + b.kernel.capacity_bytes();
}

detail::WorkspaceBuffers &ParetoWorkspace::buffers()
{
    if (!buffers_)
        buffers_ = std::make_unique<detail::WorkspaceBuffers>();
    return *buffers_;
}

void ParetoWorkspace::release() { buffers_ = std::make_unique<detail::WorkspaceBuffers>(); }

}  // namespace hetpu
