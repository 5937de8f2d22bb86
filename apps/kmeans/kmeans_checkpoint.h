// SPDX-License-Identifier: LGPL-2.1-or-later
// --checkpoint-every / --restart for kmeans: the IterationState goes through hetpu's
// checkpoint backend (include/hetpu/ckpt.h) as a protected host buffer, one version per
// checkpointed iteration under the name "kmeans". Thin glue: the bytes are
// kmeans_checkpoint_format.h's. On several MPI ranks each rank checkpoints into its own
// directory and rank 0 writes a global record last (see global_record_text); --restart then
// needs the same number of ranks and resumes from the version that record names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/kmeans/kmeans_checkpoint_format.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "apps/kmeans/kmeans_options.h"

namespace hetpu::kmeans {

class RunCheckpoints {
public:
    RunCheckpoints(const Options &o, const InputFingerprint &fp);
    ~RunCheckpoints();  // finalizes the backend if finish() was not called
    RunCheckpoints(const RunCheckpoints &) = delete;
    RunCheckpoints &operator=(const RunCheckpoints &) = delete;

    // Starts the backend on the directory (StarPU must be running). A run that takes
    // checkpoints without --restart refuses a directory already holding kmeans checkpoints,
    // so an older run's versions are never mixed with this one's. Every method below
    // returns 0, or 1 after printing the error (the backend's message included).
    int start();
    // --restart: the newest complete version, checked against this run's input, into state.
    int restore(IterationState &state);
    // Checkpoints every K-th iteration (nullptr without --checkpoint-every).
    IterationHook hook();
    // Waits for the captures and flushes and stops the backend (before hetpu_shutdown).
    int finish();

    uint32_t checkpoints_taken() const { return taken_; }

private:
    int protect(const char *region, size_t offset, size_t size);
    int backend_error(const std::string &what, int rc);
    int start_local();
    int restore_local(IterationState &state);
    // Multi-rank runs: every rank's outcome decides (1 on every rank if any rank failed).
    int agree(int rc) const;
    // Rank 0: the global record names `version` (durable on every rank).
    void publish(int64_t version);

    const Options &options_;
    InputFingerprint fp_;
    std::vector<unsigned char> buffer_;  // header + centroids; protected, so it never moves
    bool started_ = false;
    uint32_t taken_ = 0;
    // Multi-rank runs (mpirun, srun): each rank checkpoints into <dir>/rank<r>; the global
    // record <dir>/global names the newest version durable on all ranks.
    int ranks_ = 1, rank_ = 0;
    std::string rank_dir_;          // where this rank's backend writes
    int64_t restart_version_ = -1;  // from the global record
    int64_t published_ = -1;        // newest version in the global record (rank 0)
    int64_t last_taken_ = -1;
};

}  // namespace hetpu::kmeans
