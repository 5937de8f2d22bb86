// SPDX-License-Identifier: LGPL-2.1-or-later
// The process-local Ledger: a std::mutex around a heap-allocated Ledger (about a third of a
// megabyte, too large for the stack of whoever constructs the policy).
#include "node_arbiter/ledger_access.h"

#include <cstdio>
#include <exception>

namespace hetpu::mgb {

LocalLedger::LocalLedger() : ledger_(std::make_unique<Ledger>()) { ledger_init(*ledger_); }

void LocalLedger::with_ledger(const std::function<void(Ledger &)> &fn)
{
    std::lock_guard<std::mutex> lock(mutex_);
    // Same contract as the node-wide arbiter: an exception from fn never leaves with_ledger
    // (callers run on StarPU's threads). fn may have stopped halfway through an update, so
    // the derived counters are recomputed from the grants, which are the truth.
    try {
        fn(*ledger_);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu: mgb ledger: %s (ignored; counters rebuilt)\n", e.what());
        ledger_rebuild_counters(*ledger_);
    } catch (...) {
        std::fprintf(stderr, "hetpu: mgb ledger: unknown exception (ignored; counters rebuilt)\n");
        ledger_rebuild_counters(*ledger_);
    }
}

}  // namespace hetpu::mgb
