// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC: profile-based load balancing for a divisible job on heterogeneous
// processing units, as a BlockPlanner the StarPU runner and `hetpu sim` both drive.
//
//   training   every PU gets x_init; the first to finish gets 2 x_init, every other PU p
//              2 x_init R with R = t_fastest / t_p (DESIGN.md erratum); the only
//              synchronisation: when every PU has finished both training blocks, the models
//              are fitted and system (3) solved for the first virtual step;
//   execution  asynchronous: a PU's k-th regular block belongs to virtual step k, and the
//              first PU to enter step k re-fits and re-solves with all measurements; the
//              others use the latest solution without waiting;
//   gap        a PU that finishes a block earlier than predicted by more than the gap
//              threshold gets an extra block sized to fill that gap;
//   tail       once the tail fraction of the data is assigned, each new step's workload
//              shrinks by (1 - alpha), so the PUs finish together;
//   probe      a PU the solve leaves out still gets a minimum block per step while idle
//              (before the tail), so that its model keeps being measured and corrected.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "perfmodels/core/online_model.h"
#include "perfmodels/core/transfer_model.h"
#include "runtime/core/block_planner.h"
#include "runtime/core/planner_extensions.h"
#include "sched_policies/plbhac/core/plbhac_solve.h"
#include "sched_policies/plbhac/core/plbhac_straggle.h"

namespace hetpu {

// What a planner learnt about its PUs, handed to the next planner of the same job (an
// iterative application runs one divisible job per iteration: k-means' assignment pass).
// Without it every iteration would start with a training phase and models fitted from
// nothing; with it the next job starts in the execution phase with every model it had.
struct PlbhacPuMemory {
    int worker = -1;
    OnlineTimeModel exec;
    LinearTransferModel transfer;
    double size_lo = 0, size_hi = 0;
    std::vector<double> latency;  // recent per-block latencies the profiling missed, oldest first (see block_done)
    std::vector<double> home;     // recent delays from a block's end to its results in main memory (results_home)
    std::vector<double> misses;   // recent log(measured / predicted) of its blocks, out of sample (straggle hedge)
};
struct PlbhacMemory {
    std::vector<PlbhacPuMemory> pus;
};

struct PlbhacOptions {
    uint64_t x_init = 0;           // training block; 0: the job's min block scaled, see .cpp
    double gap_threshold_s = 0.4;  // HETPU_PLBHAC_GAP_MS (paper: 400 ms)
    double tail_fraction = 0.7;    // HETPU_PLBHAC_TAIL (paper: 70%)
    double alpha = 0.1;            // HETPU_PLBHAC_ALPHA (paper: 0.1)
    unsigned steps = 8;            // HETPU_PLBHAC_STEPS: virtual steps the post-training data is cut into
    // HETPU_PLBHAC_TRUST: a solve sizes a PU's block at most this many times the largest
    // block it has run (its model is an extrapolation beyond; see solve_step), squared while
    // its time has hardly grown with its size (trust_of). 0: no cap.
    double trust = 4.0;
    // HETPU_PLBHAC_WARM_STEPS: virtual steps for a planner that starts from saved models
    // (memory). Its models were measured at the sizes of a whole run, so fewer steps cost
    // fewer per-block overheads (launch, occupancy ramp) on a stable node; but larger
    // blocks react later to a change. Default: as cold (see solve_step for measurements).
    unsigned warm_steps = 8;
    // HETPU_PLBHAC_MIN_STEP_MS: fewer steps when the job is too short for them: at most
    // one step per min_step_s of the job's estimated length (0: always the step count).
    double min_step_s = 0.2;
    // HETPU_PLBHAC_STEP_ERROR: fewer steps for a job whose accelerators pay a fixed cost per
    // block, read off the PUs' measured blocks at every step before the tail (see
    // overhead_steps): steps left = sqrt(step_error T / c), T the estimated time left, c
    // the throughput-weighted fixed cost, between HETPU_PLBHAC_MIN_STEPS (min_steps; fewer
    // when min_steps fixed costs would take over a quarter of T) and the steps left as
    // planned. 0: always the step count.
    double step_error = 0.1;
    unsigned min_steps = 4;
    uint64_t accel_min_block = 0;  // minimum block on GPUs/accelerators (0: the job's minimum)
    // HETPU_PLBHAC_ALIGN: each solve equalises absolute finish times, counting the work
    // still queued on every PU (see solve_step); 0 gives the paper's equal block durations.
    bool align_finish = true;
    // The final solve comes as soon as a step's block would keep its PU busy past the time
    // at which the whole job could end (see regular_block), not only when what is left is
    // under a step and a half. Off: the paper's step count alone decides (tests compare).
    bool final_past_end = true;
    // A PU about to take its final share re-solves the final step first when blocks have
    // been measured since (see regular_block). Off: only a surprise re-solves it.
    bool reshare_final = true;
    // HETPU_PLBHAC_HEDGE: the final solve, whose blocks end the job, weighs each PU's
    // share against the straggle of its kind (the spread of its blocks' out-of-sample
    // misses): among plans that give noisier PUs less, it takes the one whose expected end
    // under those misses is earliest (see hedge_final). Off: the shares end together as
    // predicted.
    bool hedge_straggle = true;
    // HETPU_PLBHAC_SOLVER: who solves each step's system (plbhac_solve.h): auto or ipopt.
    PlbhacSolver solver = PlbhacSolver::Auto;
    // Read when the planner is built (a warm start when it holds a model for every worker)
    // and overwritten with the planner's models when it is destroyed (when it finished
    // training, was warm-started, or every PU measured a block). Null: none.
    std::shared_ptr<PlbhacMemory> memory;
    // Called by the destructor with what this planner learnt (as `memory` above): the
    // StarPU glue and `hetpu sim --models` save it to disk (plbhac_model_store.h). Must not
    // throw.
    std::function<void(const PlbhacMemory &)> on_learnt;
};

// Reads HETPU_PLBHAC_* through `lookup` (getenv in the glue, a map in tests) into `opt`;
// throws PlbhacInputError naming the bad variable and a valid example (`opt` unchanged then).
void plbhac_options_from_env(PlbhacOptions &opt, const std::function<const char *(const char *)> &lookup);

// The per-block latency a PU is priced at from its recent samples (PlbhacPuMemory::latency):
// their median, 0 without any.
double plbhac_latency_s(std::vector<double> samples);

// One line of "what the scheduler did", written when a block completes.
struct PlbhacTraceRecord {
    double time_s = 0;  // completion, seconds since the run started
    int worker = -1;
    std::string worker_name;
    uint64_t size = 0;
    double predicted_s = 0;  // model prediction when assigned (0 in training)
    double measured_s = 0;   // exec + transfer
    std::string phase;       // "training", "execution", "gap", "tail", "probe"
    unsigned step = 0;       // virtual step (0: training)
    // What the PU's blocks are priced at beyond the models, after this block: its per-block
    // latency and the delay of its results home before a job can end (see block_done and
    // results_home).
    double latency_s = 0;
    double home_delay_s = 0;
    // The block's own parts of measured_s: what StarPU's profiling saw (execution, and
    // input transfers inside the task's data acquisition), and the rest until the planner
    // heard of it (its latency sample; transfers prefetched before the task started land
    // here too).
    double exec_s = 0;
    double transfer_s = 0;
    double unseen_s = 0;
};

// The record as one JSON line (no newline): what HETPU_TRACE and `hetpu sim --plan-trace` write.
std::string plbhac_trace_json(const PlbhacTraceRecord &r);

class PlbhacPlanner final : public BlockPlanner, public PlannerExtensions {
public:
    PlbhacPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const PlbhacOptions &options);
    ~PlbhacPlanner() override;  // out of line: Pu is defined in the .cpp

    std::string name() const override { return "plb-hac"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t remaining) override;
    void block_done(const BlockDone &done) override { apply_done(done, nullptr); }
    PlannerExtensions *extensions() override { return this; }
    std::unique_ptr<PuRefit> prepare_refit(const BlockDone &done) override;
    void block_done_refitted(const BlockDone &done, PuRefit *refit) override;
    void results_home(const BlockHome &home) override;

    std::function<void(const PlbhacTraceRecord &)> on_trace;

    // Introspection (tests, reports).
    bool training() const { return !trained_; }
    bool warm_started() const { return warm_started_; }
    // Seconds from the start of the job to the end of the training synchronisation (0 for
    // a warm start; the latest completion so far while still training).
    double training_s() const { return trained_ ? training_end_s_ : now_s_; }
    unsigned solved_step() const { return solved_step_; }
    const std::vector<double> &solve_times_s() const { return solve_times_; }
    uint64_t current_block(int worker) const;
    uint64_t x_init() const { return x_init_; }
    unsigned solve_failures() const { return solve_failures_; }
    unsigned refits_applied() const { return refits_applied_; }  // block_done_refitted's refits taken as run
    // Final solves whose plan the straggle hedge changed (hedge_final's search, or a later
    // final solve with the k it chose).
    unsigned hedged_solves() const { return hedged_solves_; }

private:
    // Blocks of one PU run in the order they were assigned (StarPU's per-worker queue is
    // FIFO), so completions are matched to the front of the PU's list.
    struct Outstanding {
        uint64_t size = 0;
        double predicted_s = 0;
        std::string phase;
        unsigned step = 0;
    };
    struct Pu;    // per processing unit: models and bookkeeping (see .cpp)
    class Refit;  // one PU's models refitted with one block (prepare_refit)

    void apply_done(const BlockDone &done, Refit *refit);

    void warm_start();
    Pu *find(int worker);
    const Pu *find(int worker) const;
    size_t index_of(const Pu &pu) const;  // position in pus_ (and solution_)
    uint64_t reserved_for_final() const;
    uint64_t training_block(Pu &pu, uint64_t remaining);
    uint64_t gap_block(Pu &pu, uint64_t remaining);
    uint64_t regular_block(Pu &pu, uint64_t remaining);
    uint64_t probe_block(Pu &pu, uint64_t remaining);
    uint64_t final_block(Pu &pu, uint64_t remaining);
    uint64_t hand_out(Pu &pu, uint64_t size, Outstanding block);
    void resolve_final(uint64_t remaining);
    bool solution_sums_to(uint64_t w) const;
    double trust_ratio(const Pu &pu, uint64_t block) const;
    double trust_of(const Pu &pu) const;
    double trust_excess() const;
    void split_by_rates(uint64_t w);
    double ideal_seconds(uint64_t w) const;
    double measured_rate(const Pu &pu) const;
    double common_end_s(uint64_t remaining) const;
    void solve_step(unsigned step, uint64_t remaining);
    std::vector<PlbhacPu> solver_input(bool align, const std::vector<double> &caps,
                                       std::vector<std::unique_ptr<TimeCurve>> &curves,
                                       const std::vector<double> *scales = nullptr) const;
    std::vector<double> straggle_spreads() const;
    static std::vector<double> hedge_scales(double k, const std::vector<double> &spreads);
    PlbhacSolution hedge_final(PlbhacSolution plan, const std::vector<PlbhacPu> &input, const std::vector<double> &caps,
                               const PlbhacSolveOptions &opt);
    uint64_t largest_block_within(const Pu &pu, double seconds) const;
    double predict(const Pu &pu, uint64_t x) const;
    double ready_in(const Pu &pu) const;
    double model_time(const Pu &pu, double x) const;
    bool narrow(const Pu &pu) const;
    double anchor(const Pu &pu) const;
    uint64_t round_block(uint64_t x) const;
    double fixed_cost(const Pu &pu) const;
    static double fixed_cost_of(const std::vector<std::pair<double, double>> &blocks, double window);
    double efficient_size(const Pu &pu) const;
    double least_share(const Pu &pu) const;
    static double best_rate(const Pu &pu);
    double free_in(const Pu &pu, double rate) const;
    double measured_end_s(uint64_t remaining) const;
    unsigned overhead_steps(unsigned steps, uint64_t remaining) const;

    BlockRules rules_;
    PlbhacOptions options_;
    uint64_t x_init_ = 0;
    std::vector<std::unique_ptr<Pu>> pus_;
    std::unordered_map<int, size_t> index_by_worker_;  // worker id -> position in pus_
    mutable uint64_t reserved_ = 0;                    // reserved_for_final(), while reserved_known_
    mutable bool reserved_known_ = false;

    bool trained_ = false;
    bool warm_started_ = false;
    int first_finisher_ = -1;    // worker that finished its first training block first
    double first_finish_s_ = 0;  // its measured time for that block

    unsigned solved_step_ = 0;
    uint64_t step_workload_ = 0;    // elements per virtual step (before the tail shrink), set by the first solve
    uint64_t solved_workload_ = 0;  // workload of the last solve
    unsigned tail_start_step_ = 0;  // 0: not in the tail yet
    bool final_solved_ = false;     // the latest solve shared out everything left
    bool force_final_ = false;      // the next solve shares out everything left (resolve_final)
    unsigned measurements_since_solve_ = 0;
    double miss_since_solve_s_ = 0;   // largest |measured - predicted| of a block since the last solve
    std::vector<uint64_t> solution_;  // per PU (index in pus_), elements
    std::vector<double> solve_times_;
    unsigned solve_failures_ = 0;
    unsigned refits_applied_ = 0;
    unsigned hedged_solves_ = 0;
    // The straggle hedge's draws, made at its first use and rescaled when the spreads change.
    std::unique_ptr<PlbhacStraggleDraws> straggle_draws_;
    double last_hedge_s_ = 0;  // wall time of the latest hedge's candidate solves
    double hedge_k_ = -1;      // the straggle hedge's choice for this job's final solves (-1: none yet)
    double now_s_ = 0;         // latest completion seen: next_block is asked right after one
    double training_end_s_ = 0;
};

std::unique_ptr<BlockPlanner> make_plbhac_planner(const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                                  const PlbhacOptions &options);

}  // namespace hetpu
