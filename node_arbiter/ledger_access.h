// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a process's MGB Ledger lives: in its own memory (LocalLedger) or in the node-wide
// arbiter's shared memory (NodeArbiter, node_arbiter.h). The policies see only this
// interface, so placement code is the same whether or not processes share devices.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "node_arbiter/core/device_ledger.h"

namespace hetpu::mgb {

class LedgerAccess {
public:
    virtual ~LedgerAccess() = default;
    // Runs fn with exclusive access to the Ledger. fn must be short and must not call back
    // into StarPU (other processes wait on the same lock).
    virtual void with_ledger(const std::function<void(Ledger &)> &fn) = 0;
    virtual bool node_wide() const = 0;
    virtual std::string describe() const = 0;  // "process-local" or "node-wide arbiter /hetpu-mgb-1000"
};

class LocalLedger final : public LedgerAccess {
public:
    LocalLedger();
    void with_ledger(const std::function<void(Ledger &)> &fn) override;
    bool node_wide() const override { return false; }
    std::string describe() const override { return "process-local"; }

private:
    std::mutex mutex_;
    std::unique_ptr<Ledger> ledger_;
};

}  // namespace hetpu::mgb
