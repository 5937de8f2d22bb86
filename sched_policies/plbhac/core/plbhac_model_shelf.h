// SPDX-License-Identifier: LGPL-2.1-or-later
// Where PLB-HAC keeps the models its planners learnt, for the next job of the same name,
// size and worker set: in this process (an iterative application, k-means one divisible
// job per iteration, trains once per process, not once per iteration) and on disk
// (plbhac_model_store.h: the next run of the program on the node starts trained).
//
// A job's file is read when the process first runs a job of that key, and written when a
// job ends: at once the first time (a crash later still leaves it), after that at most once
// a second, and the latest at exit. An iterative app (k-means: 21 jobs a run) would
// otherwise pay an fsync per iteration. Pure C++, no StarPU.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/plbhac/core/plbhac_model_store.h"

namespace hetpu {

class PlbhacModelShelf {
public:
    using Say = std::function<void(const std::string &)>;

    // The process's shelf, shared by every planner of the process.
    static PlbhacModelShelf &process();

    ~PlbhacModelShelf();  // writes what was learnt since the last write

    // The memory every planner of this job name, size and worker set shares; null for an
    // unnamed job (unnamed jobs never share).
    std::shared_ptr<PlbhacMemory> memory_for(const std::string &job_name, uint64_t elements,
                                             const std::vector<PlannerWorker> &workers);

    // Fills `memory` from the file at `path` when it is still empty (the process's first job
    // of this key); a file that does not hold `key` is said through `say` and ignored.
    void load(const std::string &path, const PlbhacModelKey &key, PlbhacMemory &memory, const Say &say);

    // What a job learnt, for the file at `path` (written now or later, see above); a failed
    // write is said through `say`: it costs the next job its warm start, not this job its result.
    void learnt(const std::string &path, const PlbhacMemory &memory, const Say &say);

private:
    struct Entry {
        bool loaded = false, dirty = false;
        double written_unix_s = 0;
        PlbhacModelFile file;
        Say say;
    };
    static void write(const std::string &path, Entry &e);

    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<PlbhacMemory>> memories_;
    std::map<std::string, Entry> entries_;  // by path
};

}  // namespace hetpu
