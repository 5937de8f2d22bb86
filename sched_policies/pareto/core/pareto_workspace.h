// SPDX-License-Identifier: LGPL-2.1-or-later
// Reusable memory for HPOPTA, HEPOPTA and HTPOPTA.
//
// A call builds tables of up to p x (n+1) entries (HEPOPTA's suffix
// bounds, its partial-solution arena). Allocated afresh per call, glibc hands such blocks
// back to the kernel on free and the next call faults every page in again, which made a
// process's first calls several times slower than its best. A caller that computes many
// fronts keeps one workspace and passes it to every call: the arrays keep their capacity,
// so later calls of the same or smaller size allocate nothing.
//
// The overloads without a workspace use a temporary one, freed on return. Not a hidden
// thread_local: that would keep the largest call's tables alive in every thread that ever
// called (StarPU's workers included) for the life of the thread, invisible to the caller,
// and thread_local destructors in a library that may be dlclose()d are a known hazard.
// Keeping memory is the caller's decision, made by keeping a workspace.
//
// A workspace is used by one call at a time (not thread-safe); results do not depend on
// it (same figures, bit for bit, with a fresh, a reused or no workspace).
#pragma once

#include <cstddef>
#include <memory>

namespace hetpu {

namespace detail {
struct WorkspaceBuffers;
}

class ParetoWorkspace {
public:
    ParetoWorkspace();
    ~ParetoWorkspace();
    ParetoWorkspace(ParetoWorkspace &&) noexcept;
    ParetoWorkspace &operator=(ParetoWorkspace &&) noexcept;
    ParetoWorkspace(const ParetoWorkspace &) = delete;
    ParetoWorkspace &operator=(const ParetoWorkspace &) = delete;

    // Bytes the workspace holds now (the capacity of its arrays).
    std::size_t capacity_bytes() const;
    // Frees everything; the workspace stays usable (the next call allocates again).
    void release();

    detail::WorkspaceBuffers &buffers();  // for the cores; a moved-from workspace starts afresh

private:
    std::unique_ptr<detail::WorkspaceBuffers> buffers_;
};

}  // namespace hetpu
