// SPDX-License-Identifier: LGPL-2.1-or-later
// Pure pieces of the scale-out (StarPU-MPI) runner, kept free of MPI and StarPU so they
// are unit-tested alone: how an MPI launch is recognised, how the PUs of every rank form
// one list for one planner, and the adapter that lets a fixed-block planner (built-in
// policies, greedy) feed blocks to ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"

namespace hetpu {

// An MPI launcher (mpirun, srun, mpiexec) leaves its mark in every rank's environment.
struct MpiLaunch {
    bool launched = false;
    int size = 1;             // ranks announced by the launcher (1 when unknown)
    bool size_known = false;  // false: only PMIX_RANK said so, the number of tasks is unknown
    std::string variable;     // the variable that gave it away, for messages
    bool pmi = false;         // a process manager MPI can join: mpirun, or srun --mpi=pmix/pmi2
};

// Looks for OMPI_COMM_WORLD_SIZE (OpenMPI's mpirun), PMI_SIZE (MPICH/Hydra, srun
// --mpi=pmi2), PMIX_RANK (srun --mpi=pmix, PRRTE) and SLURM_STEP_NUM_TASKS (inside an srun
// step). SLURM_NTASKS alone is not enough: a batch script has it too, and a program
// started by the script without srun is a single process.
MpiLaunch detect_mpi_launch(const std::function<const char *(const char *)> &lookup);

// How a program starts hetpu given the launch and whether hetpu was built with StarPU-MPI.
// A one-task launch (srun -n1, mpirun -np 1) of a build without MPI is an ordinary single
// process: refusing it would make such a build unusable inside any batch system.
enum class LaunchMode {
    Single,         // hetpu_init(): no launcher, or one task without MPI support
    Mpi,            // hetpu_init_mpi() on every rank
    RefuseSeveral,  // several tasks (or an unknown number) that cannot run as one job: refuse, see message
};
struct LaunchDecision {
    LaunchMode mode = LaunchMode::Single;
    std::string message;  // for RefuseSeveral: the problem and the fix, one line with its newline
};
LaunchDecision decide_launch(const MpiLaunch &launch, bool built_with_mpi);

// One PU of a multi-rank job: a worker of one rank.
struct ClusterPu {
    int rank = 0;
    int local_worker = -1;  // the StarPU worker id on its rank
    WorkerKind kind = WorkerKind::Cpu;
    std::string name;  // StarPU's name on its rank ("CPU 0")
    std::string host;
};

// Global PU ids are indices into the list, rank by rank: what the planner sees as worker
// ids. Planner-facing names carry the rank ("r1:CPU 0") so they stay unique.
std::vector<PlannerWorker> planner_workers(const std::vector<ClusterPu> &pus);

// "" when every rank names the same policy, else "hetpu: the ranks <what> different
// policies: ..." listing them, with the fix (hetpu_init_mpi and the preload library both
// refuse such a job).
std::string mismatch_message(const std::vector<std::string> &names, const char *what);

// "" when every rank's job signature (space-separated key=value tokens, rank by rank)
// equals rank 0's, else "hetpu: <what>: rank R runs a different job than rank 0: n=512
// instead of n=256 (give every rank the same options)" for the first such rank, naming its
// first differing token.
std::string job_mismatch_message(const std::vector<std::string> &signatures, const std::string &what);

// Number of distinct hosts among the PUs (the "nodes" of an accounting record).
unsigned distinct_hosts(const std::vector<ClusterPu> &pus);

// A planner that lets the StarPU policy place blocks (fixed blocks under built-in
// policies and greedy) still needs a rank for each block across ranks. This adapter asks
// the wrapped planner for sizes but claims to assign workers, so the dispatcher hands the
// first blocks round-robin to every PU of every rank (each rank is guaranteed work) and
// gives each finished PU its next block: first idle rank served first, as greedy does.
// The runner then submits such blocks with no worker on their rank (the rank's StarPU
// policy places them), which is what `places_on_worker()` false tells it.
class PerPuPlanner final : public BlockPlanner {
public:
    explicit PerPuPlanner(std::unique_ptr<BlockPlanner> inner) : inner_(std::move(inner)) {}
    std::string name() const override { return inner_->name(); }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int, uint64_t remaining) override { return inner_->next_block(-1, remaining); }
    void block_done(const BlockDone &done) override { inner_->block_done(done); }
    PlannerExtensions *extensions() override { return inner_->extensions(); }
    const BlockPlanner &inner() const { return *inner_; }

private:
    std::unique_ptr<BlockPlanner> inner_;
};

// Control messages of the multi-rank runner, sent as bytes with plain MPI (all ranks run
// the same binary, so the layout is the same everywhere). Data never travels in them.
struct WireWorker {
    int32_t local_worker;
    int32_t kind;
    char name[64];
    char host[64];
};

struct WireAssign {
    uint64_t seq;  // block number; also gives the StarPU-MPI data tags of the block
    uint64_t offset;
    uint64_t count;
    int32_t worker;  // local worker on the target rank, -1: the rank's policy places it
    int32_t pad;
};

struct WireDone {
    uint64_t seq;
    int32_t worker;  // local worker that ran it
    int32_t error;   // 0 or -errno (building or submitting the task failed)
    double exec_s;
    double transfer_s;  // input arrival over the network + StarPU's own acquisition
};

// StarPU-MPI tag of buffer `index` of block `seq`: distinct for every (block, buffer).
inline int64_t block_data_tag(uint64_t seq, unsigned index) { return static_cast<int64_t>(seq * 32 + index); }

}  // namespace hetpu
