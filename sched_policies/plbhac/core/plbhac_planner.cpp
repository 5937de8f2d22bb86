// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_planner.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>

#include <gsl/gsl_fit.h>
#include <gsl/gsl_statistics_double.h>

#include "common/json_line.h"
#include "common/finite_number.h"

namespace hetpu {

struct PlbhacPlanner::Pu {
    PlannerWorker info;
    size_t index = 0;  // position in pus_ (and solution_)
    OnlineTimeModel exec;
    LinearTransferModel transfer;
    uint64_t min_block = 1;
    unsigned training_assigned = 0;
    unsigned training_done = 0;
    double first_training_s = 0;
    uint64_t training_sizes[2] = {0, 0};
    unsigned step = 0;                // virtual step of its latest regular block
    double pending_gap_s = 0;         // slack to fill with an extra block
    bool regime_changed = false;      // its model restarted since its last regular block
    unsigned probe_step = 0;          // solved step of its latest probe block (see probe_block)
    double size_lo = 0, size_hi = 0;  // smallest and largest measured block (see narrow)
    double fit_lo = 0, fit_hi = 0;    // smallest and largest size its execution model holds now
    void note_fit_range()
    {
        fit_lo = fit_hi = 0;
        for (const auto &pt : exec.points()) {
            fit_lo = fit_lo > 0 ? std::min(fit_lo, pt.first) : pt.first;
            fit_hi = std::max(fit_hi, pt.first);
        }
    }
    double last_end_s = 0;  // completion time of its latest block
    // Counts the blocks its models were given: a refit prepared from an older version
    // (prepare_refit) is stale and not applied.
    uint64_t models_version = 0;
    // Hedge against a surprise the model has not (yet) accepted: the ratio measured /
    // predicted of the latest block when it missed by more than kSurprise, else 1. See
    // block_done.
    double surprise_scale = 1.0;
    bool final_taken = false;   // took its share of the final solve (see final_block)
    uint64_t waiting_size = 0;  // latest block taken while waiting for the synchronisation
    // Measured blocks (size, exec + transfer seconds) since its model last restarted: the
    // fixed cost per block is read off them (fixed_cost), not off the fitted curve.
    std::vector<std::pair<double, double>> measured;
    // A warm start's saved blocks, priced the same way (see warm_start): read for the fixed
    // cost only while this run's own blocks cannot give it, and for nothing else.
    std::vector<std::pair<double, double>> saved_blocks;
    std::deque<Outstanding> outstanding;
    // Its efficient size when its blocks get dearer per element past it (efficient_size,
    // read at each solve, never lowered; 0: none). Its share of a step is then handed out
    // in blocks of at most that size: share_left is what it has still to take of it.
    double held = 0;
    uint64_t share_left = 0;
    Outstanding share_block;  // step and phase of the blocks of that share
    // Its recent per-block latencies beyond exec + transfer (see block_done), oldest first,
    // and their median: what every block of it is priced at on top of its models. The
    // median, because a timing spike must not move it and a new level (another load on
    // the node) must, once it is most of the window.
    std::vector<double> latencies;
    double latency_s = 0;
    void note_latency(double s) { note_recent(latencies, latency_s, s); }
    // Its recent delays from a block's end to its results being back in main memory (see
    // results_home), oldest first, and their median: what its last block of a job is
    // priced at on top of everything else, because the job ends only when they are home.
    std::vector<double> home_delays;
    double home_delay_s = 0;
    void note_home_delay(double s) { note_recent(home_delays, home_delay_s, s); }
    // Its recent misses, log(measured / predicted), each block predicted by the models as
    // they were before they learnt it (out of sample), oldest first: what the straggle
    // hedge reads its kind's spread off (see straggle_spreads).
    std::vector<double> misses;
    void note_miss(double m)
    {
        constexpr size_t kWindow = 32;
        misses.push_back(m);
        if (misses.size() > kWindow)
            misses.erase(misses.begin(), misses.end() - kWindow);
    }
    // Offset of the block whose end left it with nothing in flight (kNoBlock: none since):
    // only such a block's delay home is the one a job's last block pays (see results_home).
    static constexpr uint64_t kNoBlock = UINT64_MAX;
    uint64_t idle_after = kNoBlock;

private:
    static void note_recent(std::vector<double> &samples, double &median, double s)
    {
        constexpr size_t kWindow = 16;
        samples.push_back(s);
        if (samples.size() > kWindow)
            samples.erase(samples.begin(), samples.end() - kWindow);
        median = plbhac_latency_s(samples);
    }
};

namespace {

constexpr double kMinTailShrink = 0.25;
constexpr double kReshareMiss = 0.01;      // see regular_block
constexpr size_t kReshareEvery = 16;       // see regular_block
constexpr double kSurprise = 0.3;          // relative miss that makes a block a surprise (as OnlineModelOptions)
constexpr unsigned kStraggleDraws = 128;   // draws of the PUs' misses a plan's expected end is read from
constexpr double kStraggleWorth = 0.01;    // see hedge_final
constexpr double kStraggleContrast = 1.5;  // see hedge_final
constexpr double kMinSpread = 1.5;         // measured sizes closer than this say nothing of a slope (see narrow)

// Whether two block sizes are too close for a line through them to show a slope.
bool too_close(double a, double b) { return std::max(a, b) < kMinSpread * std::min(a, b); }

// Slope beyond a PU's trust cap, per second per element of its time at the cap: steep
// enough that the solve keeps the PU within a few per mille of the cap (see solve_step).
constexpr double kCapPenalty = 1e3;

// Adapts the fitted models to the solver's TimeCurve. The solver wants exact first and
// second derivatives; the fitted curves give value and slope analytically, and the
// curvature is taken as the central difference of the analytic slope, which is accurate
// to ~1e-7 relative at the block sizes involved (hundreds to millions of elements).
class ModelCurve final : public TimeCurve {
public:
    explicit ModelCurve(const std::function<double(double)> &value, const std::function<double(double)> &slope)
        : value_(value), slope_(slope)
    {}
    TimeEval eval(double x) const override
    {
        const double h = std::max(1e-3, 1e-4 * x);
        const double lo = std::max(x - h, 1e-9);
        return {value_(x), slope_(x), (slope_(x + h) - slope_(lo)) / (x + h - lo)};
    }

private:
    std::function<double(double)> value_, slope_;
};

bool parse_double(const char *text, double lo, double hi, double &out)
{
    if (!text || !*text)
        return true;
    const std::optional<double> v = finite_number(text);
    if (!v || *v < lo || *v > hi)
        return false;
    out = *v;
    return true;
}

// Seconds from now until `work` elements are done by units that each start when free (the
// pair's first, seconds from now) and then process the pair's second, elements per second:
// water-filling over the units in the order they become free. 0 without units.
double water_filled_end(std::vector<std::pair<double, double>> free_rate, double work)
{
    std::sort(free_rate.begin(), free_rate.end());
    double left = work, rate = 0;
    for (size_t k = 0; k < free_rate.size(); ++k) {
        rate += free_rate[k].second;
        const double from = free_rate[k].first;
        const double until = k + 1 < free_rate.size() ? free_rate[k + 1].first : HUGE_VAL;
        if (left <= rate * (until - from))
            return from + left / rate;
        left -= rate * (until - from);
    }
    return 0;
}

}  // namespace

void plbhac_options_from_env(PlbhacOptions &opt, const std::function<const char *(const char *)> &lookup)
{
    // Parsed into a copy: on an error `opt` is left as it was, not half updated.
    PlbhacOptions o = opt;
    double gap_ms = o.gap_threshold_s * 1e3, steps = o.steps, x_init = static_cast<double>(o.x_init);
    double align = o.align_finish ? 1 : 0, hedge = o.hedge_straggle ? 1 : 0;
    double min_step_ms = o.min_step_s * 1e3;
    if (!parse_double(lookup("HETPU_PLBHAC_STEP_ERROR"), 0, 1e3, o.step_error))
        throw PlbhacInputError("HETPU_PLBHAC_STEP_ERROR must be a fraction >= 0 (e.g. 0.1; 0: off)");
    double min_steps = o.min_steps;
    if (!parse_double(lookup("HETPU_PLBHAC_MIN_STEPS"), 1, 1e6, min_steps) || min_steps != std::floor(min_steps))
        throw PlbhacInputError("HETPU_PLBHAC_MIN_STEPS must be a whole number of virtual steps >= 1 (e.g. 4)");
    o.min_steps = static_cast<unsigned>(min_steps);
    if (!parse_double(lookup("HETPU_PLBHAC_MIN_STEP_MS"), 0, 1e9, min_step_ms))
        throw PlbhacInputError("HETPU_PLBHAC_MIN_STEP_MS must be a number of milliseconds >= 0 (e.g. 200)");
    o.min_step_s = min_step_ms * 1e-3;
    double warm_steps = o.warm_steps;
    if (!parse_double(lookup("HETPU_PLBHAC_WARM_STEPS"), 1, 1e6, warm_steps) || warm_steps != std::floor(warm_steps))
        throw PlbhacInputError("HETPU_PLBHAC_WARM_STEPS must be a whole number of virtual steps >= 1 (e.g. 4)");
    o.warm_steps = static_cast<unsigned>(warm_steps);
    if (!parse_double(lookup("HETPU_PLBHAC_TRUST"), 0, 1e9, o.trust) || (o.trust > 0 && o.trust < 1))
        throw PlbhacInputError(
            "HETPU_PLBHAC_TRUST must be 0 (no cap) or a factor >= 1 over a PU's largest measured block (e.g. 4)");
    if (!parse_double(lookup("HETPU_PLBHAC_GAP_MS"), 0, 1e9, gap_ms))
        throw PlbhacInputError("HETPU_PLBHAC_GAP_MS must be a number of milliseconds >= 0 (e.g. 400)");
    if (!parse_double(lookup("HETPU_PLBHAC_TAIL"), 0, 1, o.tail_fraction))
        throw PlbhacInputError("HETPU_PLBHAC_TAIL must be a fraction of the data in [0, 1] (e.g. 0.7)");
    if (!parse_double(lookup("HETPU_PLBHAC_ALPHA"), 0, 0.99, o.alpha))
        throw PlbhacInputError("HETPU_PLBHAC_ALPHA must be a shrink factor in [0, 0.99] (e.g. 0.1)");
    if (!parse_double(lookup("HETPU_PLBHAC_STEPS"), 1, 1e6, steps) || steps != std::floor(steps))
        throw PlbhacInputError("HETPU_PLBHAC_STEPS must be a whole number of virtual steps >= 1 (e.g. 8)");
    if (!parse_double(lookup("HETPU_PLBHAC_XINIT"), 0, 1e18, x_init) || x_init != std::floor(x_init))
        throw PlbhacInputError("HETPU_PLBHAC_XINIT must be a whole number of elements (e.g. 1024)");
    if (!parse_double(lookup("HETPU_PLBHAC_ALIGN"), 0, 1, align) || (align != 0 && align != 1))
        throw PlbhacInputError(
            "HETPU_PLBHAC_ALIGN must be 1 (equalise absolute finish times, default) or 0 (equal block durations)");
    o.align_finish = align == 1;
    if (!parse_double(lookup("HETPU_PLBHAC_HEDGE"), 0, 1, hedge) || (hedge != 0 && hedge != 1))
        throw PlbhacInputError("HETPU_PLBHAC_HEDGE must be 1 (the final shares weigh each PU kind's measured "
                               "straggle, default) or 0 (the final shares end together as predicted)");
    o.hedge_straggle = hedge == 1;
    if (const char *solver = lookup("HETPU_PLBHAC_SOLVER"); solver && *solver) {
        if (std::string(solver) == "auto")
            o.solver = PlbhacSolver::Auto;
        else if (std::string(solver) == "ipopt")
            o.solver = PlbhacSolver::Ipopt;
        else
            throw PlbhacInputError(std::string("HETPU_PLBHAC_SOLVER must be auto (the equal-finish search where every "
                                               "curve increases, Ipopt elsewhere; default) or ipopt (Ipopt for every "
                                               "solve, as the paper), not '") +
                                   solver + "'");
    }
    o.gap_threshold_s = gap_ms * 1e-3;
    o.steps = static_cast<unsigned>(steps);
    o.x_init = static_cast<uint64_t>(x_init);
    opt = o;
}

double plbhac_latency_s(std::vector<double> samples)
{
    return samples.empty() ? 0.0 : gsl_stats_median(samples.data(), 1, samples.size());
}

std::string plbhac_trace_json(const PlbhacTraceRecord &r)
{
    return json_line({{"policy", "plb-hac"},
                      {"time_s", r.time_s},
                      {"worker", r.worker},
                      {"worker_name", r.worker_name},
                      {"size", r.size},
                      {"predicted_s", r.predicted_s},
                      {"measured_s", r.measured_s},
                      {"phase", r.phase},
                      {"step", r.step},
                      {"latency_s", r.latency_s},
                      {"home_delay_s", r.home_delay_s},
                      {"exec_s", r.exec_s},
                      {"transfer_s", r.transfer_s},
                      {"unseen_s", r.unseen_s}});
}

PlbhacPlanner::PlbhacPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const PlbhacOptions &options)
    : rules_(rules), options_(options)
{
    for (auto &w : workers) {
        auto pu = std::make_unique<Pu>();
        pu->info = std::move(w);
        pu->min_block = rules_.min_block;
        if (pu->info.kind != WorkerKind::Cpu && options_.accel_min_block > pu->min_block)
            pu->min_block = round_block(options_.accel_min_block);
        pu->index = pus_.size();
        index_by_worker_.emplace(pu->info.id, pu->index);  // a repeated id finds its first PU, as a scan did
        pus_.push_back(std::move(pu));
    }
    // Default training block: training takes about 3 x_init per PU, so 1/32 of the job per
    // PU keeps it around a tenth of the job while making blocks large enough that a
    // device's fixed per-call latency does not swamp the measured slope.
    const uint64_t n = std::max<uint64_t>(1, pus_.size());
    x_init_ = options_.x_init ? options_.x_init : rules_.total / (32 * n);
    x_init_ = std::max(round_block(x_init_), rules_.min_block);
    solution_.assign(pus_.size(), 0);
    warm_start();
}

// Takes the models of a previous job of the same name when every PU of this one has a
// model there, from at least one measured block; a PU the memory does not know (another
// worker set) means training again, as the training ratio R only makes sense for all PUs
// together.
void PlbhacPlanner::warm_start()
{
    if (!options_.memory)
        return;
    std::vector<const PlbhacPuMemory *> found;
    for (const auto &pu : pus_) {
        const PlbhacPuMemory *m = nullptr;
        for (const PlbhacPuMemory &c : options_.memory->pus)
            if (c.worker == pu->info.id && c.exec.size() > 0)
                m = &c;
        if (!m)
            return;
        found.push_back(m);
    }
    for (size_t i = 0; i < pus_.size(); ++i) {
        pus_[i]->exec = found[i]->exec;
        pus_[i]->transfer = found[i]->transfer;
        pus_[i]->size_lo = found[i]->size_lo;
        pus_[i]->size_hi = found[i]->size_hi;
        pus_[i]->note_fit_range();
        for (double s : found[i]->latency)
            if (std::isfinite(s) && s >= 0)
                pus_[i]->note_latency(s);
        for (double s : found[i]->home)
            if (std::isfinite(s) && s >= 0)
                pus_[i]->note_home_delay(s);
        for (double m : found[i]->misses)
            if (std::isfinite(m))
                pus_[i]->note_miss(m);
        // The blocks behind the saved model (its window), each priced with its transfer and
        // latency as the models give them: the fixed cost per block (fixed_cost) is read off
        // them from the first solve on, instead of after three blocks of this run, which a
        // short job with few steps only has near its end. Not this run's measurements:
        // saved under another load, they must not hold a PU at an efficient size.
        for (const auto &[x, t] : pus_[i]->exec.points())
            pus_[i]->saved_blocks.emplace_back(x, t + pus_[i]->transfer.predict(x) + pus_[i]->latency_s);
    }
    trained_ = true;
    warm_started_ = true;
}

PlbhacPlanner::~PlbhacPlanner()
{
    // Only what was learnt is handed on. A job may end during its training: on a node of
    // one H200 and 15 CPU workers, the GPU did a 4096 matmul while each CPU ran its first
    // 32 columns (88 ms, longer than the GPU's whole job), run after run, as none saved a
    // model. What every PU measured is enough to start the next job from: a PU measured at
    // one size is priced in proportion to it (narrow), and the blocks it gets from the
    // solve give it more sizes. A PU that measured nothing gives nothing to start from,
    // and must not erase what an earlier job left.
    bool measured_all = true;
    for (const auto &pu : pus_)
        measured_all &= pu->exec.size() > 0;
    if (!(trained_ || measured_all) || (!options_.memory && !options_.on_learnt))
        return;
    PlbhacMemory m;
    for (const auto &pu : pus_)
        m.pus.push_back({pu->info.id, pu->exec, pu->transfer, pu->size_lo, pu->size_hi, pu->latencies, pu->home_delays,
                         pu->misses});
    if (options_.on_learnt) {
        try {
            options_.on_learnt(m);
        } catch (...) {
            // Saving is a convenience: the run's result is unaffected by a failed save.
        }
    }
    if (options_.memory)
        *options_.memory = std::move(m);
}

uint64_t PlbhacPlanner::round_block(uint64_t x) const { return x / rules_.granule * rules_.granule; }

// Looked up by map: the planner is asked once per completion and per idle worker, and a
// scan of 1,024 PUs each time was a tenth of a large cluster's planning time.
PlbhacPlanner::Pu *PlbhacPlanner::find(int worker)
{
    const auto it = index_by_worker_.find(worker);
    return it == index_by_worker_.end() ? nullptr : pus_[it->second].get();
}

const PlbhacPlanner::Pu *PlbhacPlanner::find(int worker) const
{
    const auto it = index_by_worker_.find(worker);
    return it == index_by_worker_.end() ? nullptr : pus_[it->second].get();
}

size_t PlbhacPlanner::index_of(const Pu &pu) const { return pu.index; }

uint64_t PlbhacPlanner::current_block(int worker) const
{
    for (size_t i = 0; i < pus_.size(); ++i)
        if (pus_[i]->info.id == worker)
            return solution_[i];
    return 0;
}

double PlbhacPlanner::model_time(const Pu &pu, double x) const
{
    return pu.surprise_scale * pu.exec.predict(x) + pu.transfer.predict(x);
}

// The training gives a PU p the sizes x_init and 2 x_init R; for R near 1/2 (a PU about
// half as fast as the fastest, common with a CPU next to a GPU) they are nearly the same,
// and the blocks it takes while waiting for the synchronisation have the second size too.
// A line fitted through points that close has a slope made of timing noise: it can be
// near 0 (the solver then gives the PU most of the step, 10x its fair share, and the whole
// run waits for it) or negative. Until a PU's measured sizes spread by kMinSpread, its
// time is taken as proportional to the size, through the model at the largest measured
// size (inside the measured range, where the fit is sound). For a PU with a fixed latency
// that overestimates large blocks somewhat: the safe side. The first execution block,
// sized by the solve, is far from the training sizes and ends this.
// The same holds for the sizes the model is fitted on now: its window forgets old points,
// and a job that repeats itself (k-means' passes, a warm-started step after step) soon
// fills it with blocks of nearly one size. Seen on the real node: a CPU worker's model
// fitted on 389k-403k elements selected a constant curve, 0.027 s at any size; the solve
// then gave it all 500k of a pass as if free, and left the OpenCL worker out of every
// later pass (33 ms passes instead of 27).
bool PlbhacPlanner::narrow(const Pu &pu) const
{
    return (pu.size_lo > 0 && too_close(pu.size_lo, pu.size_hi)) || (pu.fit_lo > 0 && too_close(pu.fit_lo, pu.fit_hi));
}

// Where a narrow PU's proportional time is anchored: its model's largest size, inside
// what the model is fitted on.
double PlbhacPlanner::anchor(const Pu &pu) const { return pu.fit_hi > 0 ? pu.fit_hi : pu.size_hi; }

double PlbhacPlanner::predict(const Pu &pu, uint64_t x) const
{
    const double dx = static_cast<double>(x);
    const double latency = x > 0 ? pu.latency_s : 0.0;
    if (narrow(pu))
        return model_time(pu, anchor(pu)) * dx / anchor(pu) + latency;
    return model_time(pu, dx) + latency;
}

// Seconds until `pu` drains the blocks already queued on it. Blocks of a PU run back to
// back in assignment order, so the first outstanding one started at the PU's latest
// completion. The current model prices them, not the prediction made when they were
// assigned: that one may come from a model since corrected (seen in simulation: a GPU
// block assigned under a surprise hedge at 4.2 s that ran 2.5 s; priced as assigned, the
// final solve gave that GPU 1.7 s too little and it idled at the end).
double PlbhacPlanner::ready_in(const Pu &pu) const
{
    double ready = pu.last_end_s;
    for (const Outstanding &o : pu.outstanding)
        ready += predict(pu, o.size);
    return std::max(0.0, ready - now_s_);
}

uint64_t PlbhacPlanner::largest_block_within(const Pu &pu, double seconds) const
{
    // Predicted time grows with the size (the fitted curves are clamped monotone outside
    // the measured range), so bisect over granule multiples.
    uint64_t lo = 0, hi = rules_.total / rules_.granule;
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (predict(pu, mid * rules_.granule) <= seconds)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo * rules_.granule;
}

uint64_t PlbhacPlanner::training_block(Pu &pu, uint64_t remaining)
{
    if (pu.training_assigned == 0) {
        pu.training_assigned = 1;
        pu.outstanding.push_back({x_init_, 0, "training", 0});
        return x_init_;
    }
    if (pu.training_assigned == 1 && pu.training_done == 1) {
        // The fastest PU gets 2 x_init; the others 2 x_init R, R = t_fastest / t_p, so the
        // second training blocks end close together (DESIGN.md erratum for the PLB-HAC paper).
        double r = pu.info.id == first_finisher_ ? 1.0 : first_finish_s_ / std::max(pu.first_training_s, 1e-12);
        // An accelerator never gets less than x_init / 2: dominated by a fixed launch
        // latency when fed tiny blocks, a smaller second point would measure only the
        // latency and the first linear fit would get its slope wrong by an order of
        // magnitude (seen with OpenCL on PoCL). Nor a size within kMinSpread of x_init
        // (R between 1/3 and 3/4): two such sizes show no slope, and its model stays
        // proportional through them (narrow), which prices an accelerator whose blocks are
        // mostly a launch cost as slow as it was on them, so the first solve gives it a
        // fraction of its share and the CPUs beside it the rest (seen in simulation: a GPU
        // beside 15 CPU workers, 4.6k elements after 3.9k, both in 1.4 ms, then a first
        // solve of 12k where its optimum share is 915k). It gets 2 x_init, the fastest
        // PU's size, instead: at most 2 (1 - R) <= 4/3 of its first block's time longer,
        // less the more of that time is a fixed cost. CPUs follow the paper exactly.
        uint64_t size = round_block(static_cast<uint64_t>(2.0 * x_init_ * std::min(r, 1.0)));
        if (pu.info.kind != WorkerKind::Cpu) {
            size = std::max(size, round_block(x_init_ / 2));
            if (too_close(static_cast<double>(size), static_cast<double>(x_init_)))
                size = round_block(2 * x_init_);
        }
        size = std::max(size, pu.min_block);
        pu.training_assigned = 2;
        pu.training_sizes[1] = size;
        pu.outstanding.push_back({size, 0, "training", 0});
        return size;
    }
    if (pu.training_done >= 2) {
        // Finished its training, waiting for the slower PUs (the one synchronisation).
        // Rather than idle, it keeps taking blocks (the paper credits PLB-HAC with no
        // idleness in the initial phase), each twice the last. Repeating the second
        // training size instead leaves a fast accelerator with two sizes within 1.5x of
        // each other, x_init and 2 x_init R, where its fixed launch cost dominates; its
        // model is then proportional through them and overpredicts a large block by the
        // ratio of that cost to the work (seen in simulation: 2.4 s predicted, 0.5 s run,
        // on a GPU with 50 ms per launch and x_init = 1024). Doubled blocks show the first
        // solve sizes close to the ones it will choose. The overshoot past the
        // synchronisation stays below the time already spent waiting, and is not lost:
        // the final solve counts every PU's queue. Capped at a quarter of the least share
        // of the job the measurements allow it (least_share) or of an even share of what
        // is left, whichever is larger, so no PU takes much before the models exist, while
        // an accelerator waiting for many slow PUs is not kept at blocks whose launch cost
        // is their whole time (seen on a node of one H200 and 15 CPU workers: 64 matmul
        // blocks of 64 columns, 1 ms each, while the CPUs ran their first 32 columns in 88
        // ms). The even share is of what is left, not of the job: a slow PU's quarter of an
        // even share of the job can be longer than the whole job at the optimum (seen in
        // simulation, random scenarios of 0.5-50 s: geometric mean of plb-hac / optimum
        // over 200 of them 1.607 -> 1.575 with this, 1.515 with the end cap below too).
        const double elements = std::max(static_cast<double>(remaining) / static_cast<double>(pus_.size()),
                                         least_share(pu) * static_cast<double>(rules_.total));
        const uint64_t cap = std::max(pu.training_sizes[1], round_block(static_cast<uint64_t>(elements / 4)));
        uint64_t size = std::min(2 * std::max(pu.waiting_size, pu.training_sizes[1]), cap);
        // Nor past the end of the job, when the job is short enough to end before the
        // synchronisation: a slow PU's doubled blocks would otherwise run on after every
        // other PU has finished (seen in simulation: a PU 12x slower than the fastest took
        // a 1.1 s and a 1.75 s waiting block in a job of 1.9 s at the optimum; 2.07x the
        // optimum, 1.27x with this cap). The end is over-estimated, as if the PUs without a
        // measured block did nothing: the cap must not hold a PU whose share is large.
        const double end = measured_end_s(remaining);
        if (end > 0) {
            const double rate = best_rate(pu);
            const uint64_t within = round_block(static_cast<uint64_t>(std::max(0.0, rate * (end - free_in(pu, rate)))));
            size = std::min(size, std::max(within, pu.min_block));
            if (within < pu.min_block && !pu.outstanding.empty())
                return 0;  // its next completion asks again, with what is left then
        }
        pu.waiting_size = size;
        pu.outstanding.push_back({size, 0, "training", 0});
        return size;
    }
    return 0;  // its training block is still running
}

// The PU's best measured throughput, elements per second (0 before its first block).
double PlbhacPlanner::best_rate(const Pu &pu)
{
    double r = 0;
    for (const auto &[x, t] : pu.measured)
        if (t > 0)
            r = std::max(r, x / t);
    return r;
}

// Seconds until the PU's queue drains at `rate`, its best measured throughput (training
// blocks carry no prediction yet): its running block started when the previous one ended.
double PlbhacPlanner::free_in(const Pu &pu, double rate) const
{
    if (rate <= 0)
        return 0;
    double queued = 0;
    for (const Outstanding &o : pu.outstanding)
        queued += static_cast<double>(o.size);
    return std::max(0.0, pu.last_end_s + queued / rate - now_s_);
}

// Seconds from now until `remaining` would be done by the PUs with a measured block alone,
// each at its best measured throughput once its queue drains (water-filling, as
// common_end_s): an upper bound on the job's end while some PUs are still unmeasured.
// 0 when no PU has been measured.
double PlbhacPlanner::measured_end_s(uint64_t remaining) const
{
    std::vector<std::pair<double, double>> free_rate;
    for (const auto &p : pus_)
        if (const double rate = best_rate(*p); rate > 0)
            free_rate.emplace_back(free_in(*p, rate), rate);
    if (free_rate.empty())
        return 0;
    return water_filled_end(std::move(free_rate), static_cast<double>(remaining));
}

// The smallest share of the job the blocks measured so far allow a PU: its best throughput
// over the largest throughput every PU might have. A PU still on its first block has run
// for at most the time since the job started (its block was handed out at the start), so it
// does at most x_init in half of that (margin for a late start). A PU measured on training
// sizes only may be faster on larger blocks (an accelerator's launch cost): 4x for those.
double PlbhacPlanner::least_share(const Pu &pu) const
{
    const double mine = best_rate(pu);
    if (mine <= 0 || now_s_ <= 0)
        return 0;
    double all = mine;
    for (const auto &p : pus_) {
        if (p.get() == &pu)
            continue;
        const double r = best_rate(*p);
        if (r <= 0)
            all += static_cast<double>(x_init_) / (0.5 * now_s_);
        else
            all += p->info.kind == WorkerKind::Cpu ? r : 4 * r;
    }
    return mine / all;
}

uint64_t PlbhacPlanner::gap_block(Pu &pu, uint64_t remaining)
{
    const double gap = pu.pending_gap_s;
    pu.pending_gap_s = 0;
    // Capped at the PU's regular block: a gap block sized from a model that has just been
    // proven wrong (the PU finished early) must not become the largest block of the run.
    const size_t i = index_of(pu);
    uint64_t size = std::min({largest_block_within(pu, gap), remaining, solution_[i]});
    if (size < pu.min_block)
        return 0;
    pu.outstanding.push_back({size, predict(pu, size), "gap", pu.step});
    return size;
}

// The solver's view of every PU: its fitted curves (proportional ones for a PU whose
// measured sizes are still too close, see narrow()), its minimum block and, when `align`,
// the work queued on it. The curves live in `curves` and must outlive the solve.
std::vector<PlbhacPu> PlbhacPlanner::solver_input(bool align, const std::vector<double> &caps,
                                                  std::vector<std::unique_ptr<TimeCurve>> &curves,
                                                  const std::vector<double> *scales) const
{
    std::vector<PlbhacPu> input;
    for (size_t i = 0; i < pus_.size(); ++i) {
        const Pu *pu = pus_[i].get();
        const std::int64_t min_block = static_cast<std::int64_t>(pu->min_block);
        // A per-block latency the profiling misses (block_done) delays the block's end like
        // a later start; held PUs price it per block of their efficient size below. The
        // aligned solve is the last one, whose shares end the job: the job ends when their
        // results are home, so a PU whose results come home late (results_home) must end
        // its share that much earlier.
        const double ready = (align ? ready_in(*pu) + pu->home_delay_s : 0.0) + (pu->held > 0 ? 0.0 : pu->latency_s);
        const bool proportional = narrow(*pu);
        std::function<double(double)> value, slope;
        if (proportional) {
            const double k = model_time(*pu, anchor(*pu)) / anchor(*pu);
            value = [k](double x) { return k * x; };
            slope = [k](double) { return k; };
        } else {
            const OnlineTimeModel *exec = &pu->exec;
            const double k = pu->surprise_scale;
            value = [exec, k](double x) { return k * exec->predict(x); };
            slope = [exec, k](double x) { return k * exec->derivative(x); };
        }
        // The straggle hedge prices a noisy PU's block longer than predicted (hedge_final).
        const double scale = scales && i < scales->size() ? (*scales)[i] : 1.0;
        const TimeCurve *transfer_curve = nullptr;
        if (!proportional && pu->held <= 0) {
            const LinearTransferModel *transfer = &pu->transfer;
            curves.push_back(
                std::make_unique<ModelCurve>([transfer, scale](double x) { return scale * transfer->predict(x); },
                                             [transfer, scale](double x) { return scale * transfer->derivative(x); }));
            transfer_curve = curves.back().get();
        }
        if (pu->held > 0) {
            // Held at its efficient size, a PU runs its share as blocks of that size: its
            // time grows in proportion beyond it, each block paying its latency.
            const double h = pu->held, k_h = predict(*pu, static_cast<uint64_t>(h)) / h;
            const LinearTransferModel *transfer = proportional ? nullptr : &pu->transfer;
            const double latency = pu->latency_s;
            value = [value, transfer, h, k_h, latency](double x) {
                return x > h ? k_h * x : value(x) + (transfer ? transfer->predict(x) : 0.0) + latency;
            };
            slope = [slope, transfer, h, k_h](double x) {
                return x > h ? k_h : slope(x) + (transfer ? transfer->derivative(x) : 0.0);
            };
        }
        if (scale != 1.0) {
            value = [value, scale](double x) { return scale * value(x); };
            slope = [slope, scale](double x) { return scale * slope(x); };
        }
        const double cap = i < caps.size() ? caps[i] : 0.0;
        if (cap > 0) {
            const double penalty = kCapPenalty * std::max(value(cap), 1e-9) / cap;
            value = [value, cap, penalty](double x) { return value(x) + (x > cap ? penalty * (x - cap) : 0.0); };
            slope = [slope, cap, penalty](double x) { return slope(x) + (x > cap ? penalty : 0.0); };
        }
        curves.push_back(std::make_unique<ModelCurve>(value, slope));
        const TimeCurve *exec_curve = curves.back().get();
        input.push_back({exec_curve, transfer_curve, min_block, ready});
    }
    return input;
}

// Each PU's straggle, read off the out-of-sample misses of every PU of its kind together:
// the final shares are one block per PU, so a PU's own misses are too few (a warm run of a
// short job has none of this run yet; the memory carries them). Units of one kind on one
// node share their sources of scatter (cores sharing caches and memory bandwidth, one
// driver). 0: unknown (fewer than 2 misses in the kind).
std::vector<double> PlbhacPlanner::hedge_scales(double k, const std::vector<double> &spreads)
{
    std::vector<double> scales;
    for (double spread : spreads)
        scales.push_back(1.0 + k * spread);
    return scales;
}

std::vector<double> PlbhacPlanner::straggle_spreads() const
{
    std::map<WorkerKind, std::vector<double>> pools;
    for (const auto &pu : pus_)
        pools[pu->info.kind].insert(pools[pu->info.kind].end(), pu->misses.begin(), pu->misses.end());
    std::map<WorkerKind, double> spread;
    for (const auto &[kind, misses] : pools)
        spread[kind] = plbhac_miss_spread(misses);
    std::vector<double> spreads;
    for (const auto &pu : pus_)
        spreads.push_back(spread[pu->info.kind]);
    return spreads;
}

// The final solve's shares end the job, and with one block per PU the job waits for the
// unluckiest PU: on a node of 15 CPU workers with ~20% scatter beside a steady GPU, shares
// predicted to end together ended 30% after the GPU on average (the largest of 15 misses),
// while the CPUs did 8% of the work. So the final plan is chosen among plans that price each
// PU's block 1 + k x its kind's spread longer (k from 0, the plan as solved, to 8: noisier
// PUs get less, steadier ones more), by its expected end under the PUs' misses (plbhac_
// straggle.h: log-normal misses of the measured spreads, the same draws for every plan); a
// plan must gain 0.1% to replace the one as solved. The k chosen (0 included) is kept for
// the job's later final solves, the re-shares after a surprise or as each PU takes its
// share: they solve once with it instead of searching again (six solves each time would
// multiply the final step's planning by six where it re-shares often).
// Only between kinds whose spreads are known and differ by kStraggleContrast or more: the
// hedge moves work from the noisier kind to the steadier one, and with an unknown or a like
// spread there is nothing to move it by. (Seen in simulation without that rule: a GPU whose
// one miss left its kind unknown, priced as noisy as the CPUs beside it, and plans rescaled
// for a noise all PUs shared; warm k-means passes on 15 CPUs and a GPU went from 1.19-1.58
// of the optimum to 1.49-1.77.)
PlbhacSolution PlbhacPlanner::hedge_final(PlbhacSolution plan, const std::vector<PlbhacPu> &input,
                                          const std::vector<double> &caps, const PlbhacSolveOptions &opt)
{
    const std::vector<double> spreads = straggle_spreads();
    const auto [least, most] = std::minmax_element(spreads.begin(), spreads.end());
    if (*least <= 0 || *most < kStraggleContrast * *least || plan.blocks.size() != pus_.size())
        return plan;
    const std::int64_t w = std::accumulate(plan.blocks.begin(), plan.blocks.end(), std::int64_t{0});
    std::vector<double> ready;
    for (const PlbhacPu &p : input)
        ready.push_back(p.ready_s);
    const auto durations = [&ready](const PlbhacSolution &s, const std::vector<double> &scale) {
        std::vector<double> d(ready.size(), 0.0);
        for (size_t i = 0; i < d.size(); ++i)
            if (s.blocks[i] > 0)
                d[i] = std::max(0.0, s.finish_s[i] - ready[i]) / scale[i];
        return d;
    };
    if (!straggle_draws_)
        straggle_draws_ = std::make_unique<PlbhacStraggleDraws>(spreads, kStraggleDraws);
    // Rescaled for a spread that moved by 2% or more: a new miss moves a kind's spread by
    // less, and each rescaling costs an exponential per PU and draw.
    for (size_t i = 0; i < spreads.size(); ++i)
        if (std::abs(spreads[i] - straggle_draws_->spreads()[i]) > 0.02 * spreads[i]) {
            straggle_draws_->set_spreads(spreads);
            break;
        }
    const PlbhacStraggleDraws &draws = *straggle_draws_;
    const std::vector<double> predicted = durations(plan, std::vector<double>(pus_.size(), 1.0));
    double best_end = draws.expected_end(ready, predicted);
    double predicted_end = 0;
    for (size_t i = 0; i < ready.size(); ++i)
        if (predicted[i] > 0)
            predicted_end = std::max(predicted_end, ready[i] + predicted[i]);
    // The hedge can win back at most the plan's straggle (its expected end beyond its
    // predicted one). Under kStraggleWorth of the plan's end, or under twice what the last
    // hedge's solves took, it is not worth the solves: a final solve of 16 PUs takes up to
    // a millisecond, and a short job re-shares its final step after every surprise and as
    // each PU takes its share (seen in simulation: 34 hedges in a 0.16 s job, the last
    // ones sharing 0.2 ms of work).
    const double straggle = best_end - predicted_end;
    if (straggle <= predicted_end * kStraggleWorth || straggle <= 2.0 * last_hedge_s_)
        return plan;
    const auto started = std::chrono::steady_clock::now();
    // The candidates' curves are the plan's scaled: increasing where the plan's were, so the
    // equal-finish search answers them without sampling each curve again.
    PlbhacSolveOptions candidate_opt = opt;
    candidate_opt.equal_finish_from_pus = 1;
    double solve_s = plan.solve_time_s;
    PlbhacSolution best = std::move(plan);
    bool changed = false;
    hedge_k_ = 0;
    for (double k : {0.5, 1.0, 2.0, 4.0, 8.0}) {
        const std::vector<double> scale = hedge_scales(k, spreads);
        std::vector<std::unique_ptr<TimeCurve>> curves;
        const std::vector<PlbhacPu> hedged = solver_input(true, caps, curves, &scale);
        PlbhacSolution candidate;
        try {
            candidate = plbhac_solve(hedged, w, candidate_opt);
        } catch (const std::exception &) {
            continue;  // the plans solved so far stand
        }
        solve_s += candidate.solve_time_s;
        const double end = draws.expected_end(ready, durations(candidate, scale));
        if (end < best_end * (1.0 - 1e-3)) {
            best_end = end;
            best = std::move(candidate);
            changed = true;
            hedge_k_ = k;
        }
    }
    last_hedge_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    hedged_solves_ += changed ? 1 : 0;
    best.solve_time_s = solve_s;
    return best;
}

void PlbhacPlanner::solve_step(unsigned step, uint64_t remaining)
{
    const bool in_tail = static_cast<double>(rules_.total - remaining) >= options_.tail_fraction * rules_.total;
    if (in_tail && tail_start_step_ == 0)
        tail_start_step_ = step;
    // The execution phase cuts what is left after training into `steps` virtual steps.
    // (Tried in simulation and not kept: sizing steps by the PUs' fixed per-block costs,
    // whose large blocks, sized by models fitted on training sizes, were mispredicted by
    // 10-20% and ended runs up to 8% later; recomputing each step as what is left over the
    // steps left, which changed nothing beyond noise.)
    // A warm start (saved models) may use other step counts (options_.warm_steps). Measured
    // in simulation, second runs: MM on five machines 1.08x the optimum with 8 steps, 1.07x
    // with 4; a growing-advantage GPU node 1.09x and 1.05x; but with a GPU slowed 2.5x
    // mid-run (adapt_mm_m3) 1.14x with 8 steps and 1.81x with 4 (two queued quarter-job
    // blocks sized before the slowdown). So the default stays 8, like cold starts, where
    // fewer, larger steps sized by models fitted on training sizes lost 2-8%.
    if (step_workload_ == 0) {
        unsigned steps = warm_started_ ? options_.warm_steps : options_.steps;
        // One PU has nothing to balance: steps would only cut its work into blocks that
        // each pay its per-block cost (seen in simulation: a lone accelerator ran 42k-element
        // steps, 1.9x the time of the job in one block). The trust region still grows its
        // blocks from what it has run, and holds it at an efficient size if it has one.
        if (pus_.size() == 1)
            steps = 1;
        // A job too short for its steps: each step costs a solve and fits (~5-15 ms) and a
        // block per PU (launch, transfer set-up), so a step much shorter than
        // min_step_s is mostly overhead (seen on the real node: k-means assignment passes
        // of ~0.07 s cut into 8 steps and a tail, 16+ blocks per pass). The job's length
        // is estimated from every PU's measured throughput at its largest block.
        if (options_.min_step_s > 0) {
            const double t = ideal_seconds(remaining);
            if (t > 0)
                steps = std::clamp(static_cast<unsigned>(t / options_.min_step_s), 1u, std::max(1u, steps));
        }
        step_workload_ = std::max<uint64_t>(remaining / std::max(1u, steps), rules_.min_block);
    }
    // Every later step, outside the tail, re-reads the PUs' fixed costs from their measured
    // blocks and enlarges the steps when fewer pay (overhead_steps); never smaller. A warm
    // start does so from its first step, its saved blocks measured already: in simulation,
    // second runs of short GRN jobs on 4 and 5 machines went from 1.086 and 1.115 of the
    // optimum to 1.063 and 1.062 (8 steps cut to the 4-5 their fixed costs pay for), MM on
    // 5 machines from 1.071 to 1.051, and long jobs kept their 8 steps. The tail's first
    // step too, even the first solve's: the tail shrinks from that step's size, so it sets
    // the size of every step left (seen in simulation: a job that was 70% handed out in
    // training blocks, cut into 8 steps and then shrunk, ran 20 tail blocks per GPU of 0.2
    // s fixed cost each).
    const bool tail_begins = tail_start_step_ == step;
    if ((!tail_start_step_ || tail_begins) && (solved_step_ > 0 || warm_started_ || tail_begins)) {
        const unsigned left = static_cast<unsigned>(std::max<uint64_t>(1, remaining / step_workload_));
        const unsigned n = overhead_steps(left, remaining);
        if (n < left)
            step_workload_ = std::max(step_workload_, remaining / n);
    }
    double workload = static_cast<double>(step_workload_);
    // The tail shrinks each step by (1 - alpha), down to a quarter of a regular step: the
    // point is to let the PUs finish together, and below that the blocks only buy
    // per-block overhead (seen on the real node: 150 one-column blocks of 15 ms each).
    if (tail_start_step_)
        workload *=
            std::max(kMinTailShrink, std::pow(1.0 - options_.alpha, static_cast<double>(step - tail_start_step_ + 1)));
    uint64_t w = std::min<uint64_t>(remaining,
                                    std::max<uint64_t>(round_block(static_cast<uint64_t>(workload)), rules_.min_block));
    // A remainder smaller than a step is solved whole: a last sliver would only add a step.
    if (remaining - w < w / 2 || force_final_)
        w = remaining;
    force_final_ = false;
    // A solve shares out everything not yet handed out, the rest of a share included.
    // A held PU stays held: it never runs a larger block again to show otherwise, and its
    // model, restarted by the jump between its large and its efficient blocks, no longer
    // holds the evidence (seen: a GPU held at 594k elements, released after the restart,
    // ran two 9M-element blocks at three times the time per element).
    for (auto &pu : pus_) {
        pu->held = std::max(pu->held, efficient_size(*pu));
        pu->share_left = 0;
    }
    reserved_known_ = false;

    // Nothing measured since the last solve and the same workload: the answer could not
    // change, so the step is entered without calling Ipopt. It still counts as solved: a
    // PU that enters it later, after new measurements, must not re-solve it (only the
    // first PU to enter a step evaluates the model, Algorithm 1), and the tail shrink is
    // counted in steps, so a skipped step must not stall it.
    if (solved_step_ > 0 && measurements_since_solve_ == 0 && w == solved_workload_) {
        solved_step_ = step;
        return;
    }
    solved_workload_ = w;
    // Only the last solve, which hands out everything left, counts the work queued on each
    // PU: it is the one whose finish times are the run's end. Earlier steps keep the paper's
    // equal durations: a PU uses the latest solution when it enters a step, possibly one
    // solved while it was a step behind, and offsets valid at another PU's solve would then
    // size its block for someone else's queue (seen in simulation: blocks oscillating
    // between 0.4x and 2x and a 6 s block at the very end).
    PlbhacSolveOptions opt;
    opt.granule = static_cast<std::int64_t>(rules_.granule);
    opt.solver = options_.solver;
    try {
        // Trust region: no PU gets a block beyond options_.trust times the largest size it has
        // been measured at, because past that its model is an extrapolation, and the
        // equal-finish solve turns one PU's extrapolation error into every other PU's
        // block. A GPU whose advantage grows with the block size looks slow on training
        // blocks (seen in simulation: 1,024-element blocks where it was 0.8x the CPU, 20x
        // on millions); without the cap the first step gave the CPU two blocks of 150 s
        // each in a job whose optimum is 100 s. With it the step shrinks until the most
        // extrapolated PU is within that factor of what it has run, so the step sizes grow
        // geometrically (as HDSS's adaptive phase does) while the models learn, and the
        // cap stops binding once every PU has run blocks of its share's size.
        // solve_times_ keeps one entry per step (the step's model evaluation, Algorithm 1),
        // summing the re-solves of the trust region.
        solve_times_.push_back(0.0);
        std::vector<double> caps(pus_.size(), 0.0);  // per PU, elements; 0: none
        std::vector<uint64_t> previous;              // the solution before the latest shrink
        uint64_t previous_w = 0;
        bool capped = false;
        for (int attempt = 0;; ++attempt) {
            const bool align = options_.align_finish && w == remaining;
            // A final solve after the hedge has chosen its k re-solves with it (hedge_final).
            const bool hedged = align && options_.hedge_straggle && hedge_k_ > 0;
            const std::vector<double> scales =
                hedged ? hedge_scales(hedge_k_, straggle_spreads()) : std::vector<double>();
            std::vector<std::unique_ptr<TimeCurve>> curves;
            std::vector<PlbhacPu> input = solver_input(align, caps, curves, hedged ? &scales : nullptr);
            try {
                // A capped PU's curve bends sharply at its cap, where Ipopt's interior point
                // crawls (seen: 1,000 iterations, 0.4 s per solve of 16 PUs); the
                // equal-finish search, which only needs increasing curves, solves it.
                PlbhacSolveOptions o = opt;
                if (capped)
                    o.equal_finish_from_pus = 1;
                PlbhacSolution s = plbhac_solve(input, static_cast<std::int64_t>(w), o);
                if (align && options_.hedge_straggle && hedge_k_ < 0)
                    s = hedge_final(std::move(s), input, caps, o);
                else if (hedged)
                    ++hedged_solves_;
                for (size_t i = 0; i < pus_.size(); ++i)
                    solution_[i] = static_cast<uint64_t>(s.blocks[i]);
                solve_times_.back() += s.solve_time_s;
            } catch (const std::exception &) {
                if (attempt == 0)
                    throw;
                // A re-solve of a smaller step failed: the previous attempt's split,
                // scaled to this step, is inside the trust region too (shares scale
                // with the step for the near-linear curves the cap applies to).
                ++solve_failures_;
                const uint64_t before = std::accumulate(solution_.begin(), solution_.end(), uint64_t{0});
                for (size_t i = 0; i < pus_.size(); ++i)
                    solution_[i] = std::max(round_block(static_cast<uint64_t>(static_cast<double>(solution_[i]) * w /
                                                                              std::max<uint64_t>(before, 1))),
                                            pus_[i]->min_block);
                break;
            }
            const double over = trust_excess();
            // Shrinking the step assumes shares scale with it. A PU whose model is flat
            // beyond its measured sizes (a fixed cost seen only on blocks of a few
            // elements) breaks that: its share is most of a large step and nothing of a
            // small one, where its fixed cost outweighs the step. Shrinking by its excess
            // then overshoots to a step that grows nobody (seen in simulation: 16 PUs,
            // one-element training blocks, ~5k-element steps of 6 ms in a 55 s job, 500
            // steps and a planner that never finished). So the step is solved again at its
            // size before the shrink, the PUs that were beyond their trust region capped
            // there instead (their time curves turn steep past the cap).
            if (!capped && !previous.empty() && over * options_.trust < 1.0) {
                for (size_t i = 0; i < pus_.size(); ++i)
                    if (trust_ratio(*pus_[i], previous[i]) > 1.0)
                        caps[i] = trust_of(*pus_[i]) * pus_[i]->size_hi;
                capped = true;
                w = previous_w;
                continue;
            }
            const uint64_t smaller = round_block(static_cast<uint64_t>(static_cast<double>(w) / over));
            // A capped PU may end a few per mille past its cap (the penalty is a slope, not
            // a wall): that is not worth another solve.
            if (over <= (capped ? 1.02 : 1.0) || attempt >= (capped ? 4 : 2) || smaller < rules_.min_block ||
                smaller >= w)
                break;
            previous = solution_;
            previous_w = w;
            w = smaller;
        }
    } catch (const std::exception &) {
        // Keep going on the previous solution (or a split by measured speeds before the
        // first one): a failed solve must not stop the run.
        ++solve_failures_;
        if (solved_step_ == 0)
            split_by_rates(w);
    }
    solved_step_ = step;
    // A failed solve left the previous solution, whose shares do not add up to what is
    // left: nothing is reserved then, and the next step tries again.
    final_solved_ = w == remaining && solution_sums_to(w);
    measurements_since_solve_ = 0;
    miss_since_solve_s_ = 0;
    reserved_known_ = false;  // solution_ was written
}

// A PU the solve leaves out gets no blocks, hence no new measurements: a model that
// excludes it wrongly stays wrong for the rest of the run. That happens after a slowdown:
// the execution model restarts from the few slow blocks, which all had about the same
// size, and may then predict the same time for every size, so that no block seems to
// pay off. An idle, left-out PU therefore gets one block of its minimum size per virtual
// step (outside the tail, where the end of the run is near): it costs little, and a point
// far from the sizes already measured shows the next solve how the PU's time scales.
// The PU is asked again after every completion, so it is never forgotten.
uint64_t PlbhacPlanner::probe_block(Pu &pu, uint64_t remaining)
{
    if (!pu.outstanding.empty() || tail_start_step_ || final_solved_ || pu.probe_step == solved_step_)
        return 0;
    pu.probe_step = solved_step_;
    const uint64_t size = std::min(pu.min_block, remaining);
    // A probe that would outlast the job ends it late: a PU the solve leaves out because its
    // smallest block takes longer than the rest of the job (a CPU beside a GPU that does
    // the whole job in less than one CPU block) is not measured again in that job.
    if (predict(pu, size) > common_end_s(remaining))
        return 0;
    pu.outstanding.push_back({size, predict(pu, size), "probe", pu.step});
    return size;
}

// The block size past which a PU has been measured slower per element, by more than timing
// noise explains (0: none). Device memory exceeded, a cache thrashed: past such a size the
// curve is convex, and a step cut for fewer, larger blocks would make every block dearer
// (seen in simulation: a GPU whose time per element doubled from 2M to 16M elements ran
// 4M-element steps and ended 30% after greedy's 1k-element blocks). The PU's most
// efficient measured block, when at least two blocks of three times its size or more were
// all kConvex dearer per element, or one was twice that. (Closer sizes may differ by less
// on a gently convex curve: 1.22x at twice the size where 4x was 1.5x.)
double PlbhacPlanner::efficient_size(const Pu &pu) const
{
    constexpr double kConvex = 0.25;
    // Blocks shorter than a quarter of the shortest worthwhile step do not count: held
    // there, a PU would run millions of blocks whose per-task costs no profile shows (seen
    // in simulation: a PU held at 128 elements, 1.6 ms, in a 165M-element job). Nor do
    // blocks shorter than kMinEvidence, whatever the step length: a few milliseconds are
    // within the jitter of a loaded machine, and a hold is never lifted (seen on a loaded
    // 2-core machine with HETPU_PLBHAC_MIN_STEP_MS=0: one 64-column matmul block of a few
    // ms ran 1.5x dearer per column than the 16-column one before it, and the lone OpenCL
    // PU was held at 16 columns for the rest of the job, 14 blocks instead of 4).
    constexpr double kMinEvidence = 0.05;
    const double shortest = std::max(options_.min_step_s / 4, kMinEvidence);
    double best_x = 0, best = HUGE_VAL;
    for (const auto &[x, t] : pu.measured)
        if (x > 0 && t >= shortest && t > 0 && t / x < best) {
            best = t / x;
            best_x = x;
        }
    if (best_x <= 0)
        return 0;
    unsigned larger = 0;
    double cheapest_larger = HUGE_VAL;
    for (const auto &[x, t] : pu.measured)
        if (x >= 3 * best_x) {
            cheapest_larger = std::min(cheapest_larger, t / x);
            ++larger;
        }
    // One such block is enough when it was twice kConvex dearer: far beyond timing noise,
    // and the block queued behind it is already larger still.
    const double dearer = larger >= 2 ? 1 + kConvex : 1 + 2 * kConvex;
    return larger >= 1 && cheapest_larger >= dearer * best ? best_x : 0;
}

// A PU's fixed cost per block, from its measured blocks rather than its fitted curve: a
// curve's tangent intercept at large sizes is ill-conditioned (1-3% of model error is
// 0.3-0.5 s of intercept on a 9 s block, against a true 0.1 s). The intercept of a
// least-squares line through the blocks of at least a quarter of its largest size (at
// least three, spanning 2x or more), so beyond the small sizes where an accelerator's curve
// is still concave once its blocks have grown; while they have not, the line through the
// concave part underestimates the cost. The estimate is lowered by one standard error
// (residual-based, at least kNoise of the times), so that noise gives more steps, not
// fewer. A line that does not rise reads as the blocks' mean time, all of it fixed cost
// (seen in simulation: a GPU that took 0.2 s at every size from 16k to 95k elements showed
// no cost, kept 8 steps of 0.2 s each and ended a job whose optimum is 0.30 s at 2.2-2.4 s;
// with its cost read, 1.85 s). Returns -1 when it cannot be read (too few sizes).
// When the blocks within a quarter of the largest span less than 2x (steps of one size
// after a trust-region ramp that grew 4x per block), the line goes down to a sixteenth:
// otherwise such a PU never shows its cost and keeps every step (seen in simulation: a
// PU running 4k-element blocks at 60% of its 64k-element rate for the whole job; the
// growing-advantage nodes' short jobs 1.117 -> 1.099 and 1.075 -> 1.068 of the optimum).
double PlbhacPlanner::fixed_cost(const Pu &pu) const
{
    double c = fixed_cost_of(pu.measured, 4);
    if (c < 0)
        c = fixed_cost_of(pu.measured, 16);
    return c >= 0 || pu.saved_blocks.empty() ? c : fixed_cost_of(pu.saved_blocks, 4);
}

double PlbhacPlanner::fixed_cost_of(const std::vector<std::pair<double, double>> &blocks, double window)
{
    constexpr double kNoise = 0.02;  // relative timing noise assumed at least
    double x_hi = 0;
    for (const auto &m : blocks)
        x_hi = std::max(x_hi, m.first);
    std::vector<double> xs, ts;
    for (const auto &m : blocks)
        if (m.first >= x_hi / window) {
            xs.push_back(m.first);
            ts.push_back(m.second);
        }
    const size_t n = xs.size();
    if (n < 3 || *std::min_element(xs.begin(), xs.end()) > x_hi / 2)
        return -1;
    // Unit weights: gsl_fit_wlinear's cov00 is then the intercept's variance per unit of
    // residual variance, which is scaled below by the larger of the residual variance and
    // the assumed noise (an exact fit through three points must not look certain).
    const std::vector<double> ws(n, 1.0);
    double c, slope, cov00, cov01, cov11, rss;
    gsl_fit_wlinear(xs.data(), 1, ws.data(), 1, ts.data(), 1, n, &c, &slope, &cov00, &cov01, &cov11, &rss);
    if (!std::isfinite(slope) || !std::isfinite(c))
        return -1;
    const double mt = std::accumulate(ts.begin(), ts.end(), 0.0) / static_cast<double>(n);
    if (!(slope > 0)) {
        // Blocks spanning 2x or more that took no longer as they grew: their time is all
        // fixed cost, as far as they show (the least-squares line with a slope of at least
        // 0 is their mean), lowered by the mean's standard error.
        double ss = 0;
        for (double t : ts)
            ss += (t - mt) * (t - mt);
        const double s2 = std::max(ss / static_cast<double>(n - 1), (kNoise * mt) * (kNoise * mt));
        return std::max(0.0, mt - std::sqrt(s2 / static_cast<double>(n)));
    }
    const double s2 = std::max(rss / static_cast<double>(n - 2), (kNoise * mt) * (kNoise * mt));
    return std::max(0.0, c - std::sqrt(s2 * cov00));
}

// Steps for the execution phase when the accelerators pay a fixed cost c per block: each
// step costs every PU one block's fixed cost, each step's misprediction costs about
// step_error of a step's length, so steps x c + step_error T / steps is least at
// sqrt(step_error T / c). At least min_steps (a slowdown needs steps to be seen and acted
// on, unless those steps' fixed costs would take more than a quarter of the time left) and
// at most `steps`. A PU whose fixed cost cannot be read counts as having none.
// Measured in simulation (bench/README.md): short MM/GRN 0.5-2.6% closer to the optimum.
unsigned PlbhacPlanner::overhead_steps(unsigned steps, uint64_t remaining) const
{
    if (options_.step_error <= 0 || steps <= options_.min_steps)
        return steps;
    double rate_sum = 0, cost_sum = 0;
    for (const auto &pu : pus_) {
        const double rate = measured_rate(*pu);
        if (rate <= 0)
            return steps;
        const double c = std::max(0.0, fixed_cost(*pu));  // unreadable (-1): none, so more steps
        rate_sum += rate;
        cost_sum += rate * c;
    }
    const double t = ideal_seconds(remaining);
    if (rate_sum <= 0 || cost_sum <= 0 || t <= 0)
        return steps;
    const double c = cost_sum / rate_sum;
    const double n = std::ceil(std::sqrt(options_.step_error * t / c));
    if (n >= steps)
        return steps;
    // The floor keeps steps to see a slowdown by, but not at any price: the floor's fixed
    // costs may take at most kMaxFloorCost of the time left (seen in simulation: a GPU that
    // took 0.2 s per block at any size, in a job of ~1.3 s after training, ran 4 steps of
    // 0.2 s where its optimum is one block; its cold run 1.85 -> 1.66-1.70 s, its third run
    // 0.87 -> 0.32 s against an optimum of 0.30 s).
    constexpr double kMaxFloorCost = 0.25;
    const unsigned least = std::clamp(static_cast<unsigned>(kMaxFloorCost * t / c), 1u, options_.min_steps);
    return std::max(least, static_cast<unsigned>(n));
}

// Seconds for `w` elements if every PU ran at the throughput it showed at its largest
// block (0 when none is known): the job's length, for choosing how many steps it can pay.
double PlbhacPlanner::ideal_seconds(uint64_t w) const
{
    double rate = 0;
    for (const auto &pu : pus_)
        rate += measured_rate(*pu);
    return rate > 0 ? static_cast<double>(w) / rate : 0.0;
}

// Elements per second at the PU's largest measured block (inside its measured range, where
// its model is sound); 0 when it has none or the prediction there is unusable.
double PlbhacPlanner::measured_rate(const Pu &pu) const
{
    const double x = pu.held > 0 ? pu.held : pu.size_hi;
    if (x <= 0)
        return 0;
    const double t = predict(pu, static_cast<uint64_t>(x));
    return t > 0 && std::isfinite(t) ? x / t : 0;
}

// Seconds from now until what is left would be done if it were shared so that every PU
// ends at the same time, each starting when its queue drains (ready_in) and running at the
// throughput of its largest measured block (0 when a PU has none): water-filling over the
// PUs in the order they become free.
double PlbhacPlanner::common_end_s(uint64_t remaining) const
{
    std::vector<std::pair<double, double>> free_rate;  // (ready in, elements per second)
    for (const auto &pu : pus_) {
        const double rate = measured_rate(*pu);
        if (rate <= 0)
            return 0;
        free_rate.emplace_back(ready_in(*pu), rate);
    }
    return water_filled_end(std::move(free_rate), static_cast<double>(remaining));
}

// What the first step falls back on when Ipopt fails: shares proportional to each PU's
// measured throughput at the largest size it has run (inside its measured range, where
// the model is sound), within the trust region. An even split, the former fallback, gave
// each CPU of a warm-started five-machine run as much as each GPU: 60k-element blocks of
// 75 s in a 84 s job (seen in simulation, makespan 1.76x the optimum).
void PlbhacPlanner::split_by_rates(uint64_t w)
{
    std::vector<double> rate(pus_.size(), 0.0);
    double sum = 0;
    for (size_t i = 0; i < pus_.size(); ++i) {
        const Pu &pu = *pus_[i];
        const double x = pu.size_hi > 0 ? pu.size_hi : static_cast<double>(x_init_);
        const double t = predict(pu, static_cast<uint64_t>(x));
        rate[i] = t > 0 && std::isfinite(t) ? x / t : 0.0;
        sum += rate[i];
    }
    for (size_t i = 0; i < pus_.size(); ++i) {
        const double share = sum > 0 ? rate[i] / sum : 1.0 / static_cast<double>(pus_.size());
        uint64_t x = round_block(static_cast<uint64_t>(share * static_cast<double>(w)));
        if (options_.trust > 0 && pus_[i]->size_hi > 0)
            x = std::min(x, round_block(static_cast<uint64_t>(trust_of(*pus_[i]) * pus_[i]->size_hi)));
        solution_[i] = std::max(x, pus_[i]->min_block);
    }
}

// The trust region's factor for this PU: options_.trust, squared while its time has
// hardly grown with its size (a fixed cost still dominates its blocks): between its largest
// block and the largest of at most half that size, the time grew by less than the square
// root of the size ratio. A block then costs at most trust^2 times that flat time, and an
// accelerator with a launch cost reaches its share in fewer blocks (seen in simulation: a
// GPU's k-means blocks grew 3x per block from 4k points at ~1.4 ms each; one pass on 15
// CPUs and the GPU 1.33 -> 1.23x the optimum; 200 random scenarios, geometric mean of
// plb-hac / optimum 1.512 -> 1.496). A warm start reads it off its saved blocks until this
// run has measured two sizes: its first solve is then often its final one, and a flat GPU
// held to 4x its saved blocks took a fifth of its share, which the noisy CPUs beside it
// took instead (seen in simulation: warm k-means passes with a GPU whose blocks are mostly
// a 6.5 ms launch, 15 CPUs with 20% scatter; second runs 1.57-2.08 of the optimum, 1.33-1.93
// with this).
double PlbhacPlanner::trust_of(const Pu &pu) const
{
    const auto widest = [](const std::vector<std::pair<double, double>> &blocks, double &x_lo, double &t_lo,
                           double &x_hi, double &t_hi) {
        x_hi = t_hi = x_lo = t_lo = 0;
        for (const auto &[x, t] : blocks)
            if (x > x_hi) {
                x_hi = x;
                t_hi = t;
            }
        for (const auto &[x, t] : blocks)
            if (x <= x_hi / 2 && x > x_lo) {
                x_lo = x;
                t_lo = t;
            }
    };
    double x_lo, t_lo, x_hi, t_hi;
    widest(pu.measured, x_lo, t_lo, x_hi, t_hi);
    if (x_lo <= 0)
        widest(pu.saved_blocks, x_lo, t_lo, x_hi, t_hi);
    // A time that fell by more than noise as the size grew is a one-off cost in the smaller
    // block (seen on the real node: an OpenCL worker's first block carried 58 ms of kernel
    // compilation, the next, twice its size, 0.7 ms), not evidence of a flat curve.
    if (x_lo <= 0 || t_lo <= 0 || t_hi < 0.8 * t_lo)
        return options_.trust;
    const double elasticity = std::log(t_hi / t_lo) / std::log(x_hi / x_lo);
    return elasticity < 0.5 ? options_.trust * options_.trust : options_.trust;
}

// How far a block reaches beyond the PU's trust region: its ratio to options_.trust times
// the PU's largest measured size (<= 1: inside; 0 without a trust region). Blocks of a
// PU's minimum size never count: they are the smallest thing it can be given; nor do a
// held PU's, which never exceed its measured efficient size.
double PlbhacPlanner::trust_ratio(const Pu &pu, uint64_t block) const
{
    if (options_.trust <= 0 || block <= pu.min_block || pu.size_hi <= 0 || pu.held > 0)
        return 0;
    return static_cast<double>(block) / (trust_of(pu) * pu.size_hi);
}

// How far the current solution reaches beyond the trust region: the largest trust_ratio.
double PlbhacPlanner::trust_excess() const
{
    double over = 0;
    for (size_t i = 0; i < pus_.size(); ++i)
        over = std::max(over, trust_ratio(*pus_[i], solution_[i]));
    return over;
}

bool PlbhacPlanner::solution_sums_to(uint64_t w) const
{
    uint64_t sum = 0;
    for (uint64_t x : solution_)
        sum += x;
    return sum == w;
}

// The final solve shares out everything left, each PU's block sized to end with the
// others after the work already queued on it. So each PU takes its share exactly once:
// a PU a step behind reaches the final solution from an earlier step, and taking its
// share again there would be taking someone else's (seen in simulation with 4 steps: two
// GPUs each took their 9 s final share twice and the run ended 9 s late). A PU asking
// again gets only what no untaken share reserves (a share cut by a failed solve).
uint64_t PlbhacPlanner::final_block(Pu &pu, uint64_t remaining)
{
    const size_t i = index_of(pu);
    uint64_t size = 0;
    if (!pu.final_taken) {
        pu.final_taken = true;
        reserved_known_ = false;
        size = std::min(solution_[i], remaining);
    } else {
        const uint64_t reserved = reserved_for_final();
        size = remaining > reserved ? remaining - reserved : 0;
    }
    if (size == 0)
        return 0;
    pu.step = solved_step_;
    const bool tail = tail_start_step_ != 0;
    return hand_out(pu, size, {0, 0, tail ? "tail" : "execution", solved_step_});
}

void PlbhacPlanner::resolve_final(uint64_t remaining)
{
    force_final_ = true;
    solve_step(solved_step_ + 1, remaining);
    if (final_solved_)
        for (auto &p : pus_)
            p->final_taken = false;
    reserved_known_ = false;
}

// What the final shares not yet taken and the pieces of shares still to hand out add up
// to. Cached: every idle PU that has taken its final share asks for more after each
// completion, and a sum over the PUs each time made the final step quadratic in them (a
// seventh of a 2,048-PU run's planning time). Every write to solution_, share_left or
// final_taken clears the cache.
uint64_t PlbhacPlanner::reserved_for_final() const
{
    if (!reserved_known_) {
        reserved_ = 0;
        for (size_t j = 0; j < pus_.size(); ++j)
            reserved_ += pus_[j]->share_left + (pus_[j]->final_taken ? 0 : solution_[j]);
        reserved_known_ = true;
    }
    return reserved_;
}

uint64_t PlbhacPlanner::regular_block(Pu &pu, uint64_t remaining)
{
    // A PU whose speed changed after the final solve would otherwise run a final share
    // sized for its old speed while the others idle at the end (seen in simulation: a
    // warm-started GPU slowed 2.5x took a 190k-element share predicted at 19 s that ran
    // 48 s; the run ended 1.8x the optimum). Its surprise re-solves the final step with
    // every share not yet taken, counting each PU's queue, and every PU takes its new
    // share once.
    // Likewise, but without a surprise: the final shares are sized when the first PU enters
    // the final step, from predictions of every other PU's queue, which reach seconds ahead
    // (two blocks per PU). A completion that missed its prediction by more than
    // kReshareMiss of the time run so far moves that PU's end by as much, so a PU about to
    // take its share re-solves first: only the shares not yet taken move, and a PU that has
    // taken its share gets another only if it would otherwise idle before the others end
    // (seen in simulation, GRN on five machines: the PUs' end times spread over 0.8 s, 0.4
    // s with the re-solve). Smaller misses are left: re-solving after every completion
    // cost MM on five machines 21 solves of 13 PUs, ~2 s of planning, for nothing.
    // A re-share solves for every PU, under the lock every completion waits for, and among
    // a thousand PUs one misses by that much at nearly every completion: at most one per
    // kReshareEvery-th of the PUs reporting, so its cost per completion stays bounded (seen
    // in simulation: 2,048 PUs re-sharing at nearly every completion held the lock long
    // enough to make the next blocks miss, and a 60 s job had not ended after 15 minutes
    // of simulation). Up to kReshareEvery PUs every report counts.
    const bool reshare = options_.reshare_final && !pu.final_taken && miss_since_solve_s_ > kReshareMiss * now_s_ &&
                         kReshareEvery * measurements_since_solve_ >= pus_.size();
    if (final_solved_ && (pu.regime_changed || reshare)) {
        pu.regime_changed = false;
        resolve_final(remaining);
    }
    if (final_solved_)
        return final_block(pu, remaining);
    // While a PU's queued block reaches beyond the sizes it has run, its next block waits
    // for that block's measurement: the trust region grows a PU's blocks by up to
    // options_.trust over what it has measured, but a block sized while the previous one
    // is still unmeasured grows only from the one before, so two blocks in flight halve
    // the ramp's growth per block, and every ramp block pays the PU's fixed per-block cost
    // (seen in simulation: 9 GPU blocks from 1.5k to 583k elements with two in flight, 5
    // with one; a growing-advantage node 1.18x -> 1.15x the optimum). The cost is one
    // callback's latency per ramp block, as for a PU with a single block in flight.
    if (options_.trust > 0)
        for (const Outstanding &o : pu.outstanding)
            if (static_cast<double>(o.size) > pu.size_hi)
                return 0;
    const unsigned step = pu.step + 1;
    // The first PU to enter a step re-solves (solve_step skips Ipopt when nothing changed);
    // the others use the latest solution without waiting. One exception: a PU whose model
    // has just restarted (its speed changed: a competing process) re-solves the current
    // step before taking its next block. Waiting for the next step would hand it one more
    // block sized for its old speed, and with blocks of seconds that is the difference
    // between noticing a slowdown within a few blocks and never (paper Fig. 6).
    if (step > solved_step_)
        solve_step(step, remaining);
    else if (pu.regime_changed)
        solve_step(solved_step_, remaining);
    pu.regime_changed = false;
    if (final_solved_)
        return final_block(pu, remaining);
    const size_t i = index_of(pu);
    uint64_t size = std::min(solution_[i], remaining);
    // A step's block that keeps this PU busy past the time at which the whole job could end
    // (what is left shared so that every PU ends together after its queue) commits it to
    // work the others will be idle for: with two blocks queued per PU and few, long steps
    // (GRN on four machines, HETPU_PLBHAC_MIN_STEPS=2, in simulation) a GPU took a 3.6 s
    // block of the last regular step and ended 2.3 s after the others; 20.4 s against 18.7
    // s with this rule. That step becomes the final one: everything left is shared
    // counting every PU's queue.
    if (options_.final_past_end && size > 0 && size < remaining) {
        const double end = common_end_s(remaining);
        if (end > 0 && ready_in(pu) + predict(pu, size) > end) {
            resolve_final(remaining);
            if (final_solved_)
                return final_block(pu, remaining);
            size = std::min(solution_[i], remaining);  // the solve failed: the last solution
        }
    }
    if (size == 0)
        return probe_block(pu, remaining);  // left out of this step
    pu.step = step;
    const bool tail = tail_start_step_ && step >= tail_start_step_;
    return hand_out(pu, size, {0, 0, tail ? "tail" : "execution", step});
}

// Hands `size` elements of a share to the PU as its next block, or the first block of
// them when it is held at a smaller efficient size (the rest follows in next_block).
uint64_t PlbhacPlanner::hand_out(Pu &pu, uint64_t size, Outstanding block)
{
    if (pu.held > 0 && static_cast<double>(size) > pu.held) {
        const uint64_t piece = std::max(round_block(static_cast<uint64_t>(pu.held)), pu.min_block);
        if (piece < size) {
            pu.share_left = size - piece;
            reserved_known_ = false;
            pu.share_block = block;
            size = piece;
        }
    }
    block.size = size;
    block.predicted_s = predict(pu, size);
    pu.outstanding.push_back(block);
    return size;
}

uint64_t PlbhacPlanner::next_block(int worker, uint64_t remaining)
{
    Pu *pu = find(worker);
    if (!pu || remaining == 0)
        return 0;
    if (!trained_)
        return training_block(*pu, remaining);
    if (pu->share_left > 0) {
        const uint64_t size = std::min(pu->share_left, remaining);
        pu->share_left -= size;
        reserved_known_ = false;
        return hand_out(*pu, size, pu->share_block);
    }
    // After the final solve every element left is reserved for a PU's final share.
    if (pu->pending_gap_s > options_.gap_threshold_s && !final_solved_)
        if (uint64_t size = gap_block(*pu, remaining))
            return size;
    return regular_block(*pu, remaining);
}

// Copies of a PU's models and the block to fit them with. A curve choice costs about a
// millisecond (perfmodels/README.md); with 16 workers whose blocks end together the
// StarPU glue, which plans every completion under one lock, made each wait for the
// others' choices (seen on an H200 node with 15 CPU workers: k-means blocks of a few
// milliseconds, plb-hac 2.1x eager). Refitted on the worker's own thread instead, and
// handed over under the lock.
class PlbhacPlanner::Refit final : public PuRefit {
public:
    Refit(const Pu &pu, const BlockDone &done)
        : worker(pu.info.id), version(pu.models_version), x(static_cast<double>(done.count)), exec_s(done.exec_s),
          transfer_s(done.transfer_s), exec(pu.exec), transfer(pu.transfer)
    {}
    void run() override
    {
        // The same adds as apply_done's, on the copies.
        if (fits_exec(x, exec_s))
            add_measured(exec, x, exec_s);
        if (fits_transfer(x, transfer_s))
            add_measured(transfer, x, transfer_s);
        ran = true;
    }
    static bool fits_exec(double x, double exec_s) { return exec_s > 0 && x > 0; }
    static bool fits_transfer(double x, double transfer_s) { return x > 0 && transfer_s >= 0; }
    // An invalid time (an infinite one from a broken clock) throws before the model
    // changes: it keeps its last fit.
    template <typename Model> static void add_measured(Model &model, double x, double seconds)
    {
        try {
            model.add(x, seconds);
        } catch (const std::invalid_argument &) {
        }
    }

    const int worker;
    const uint64_t version;
    const double x, exec_s, transfer_s;
    OnlineTimeModel exec;
    LinearTransferModel transfer;
    bool ran = false;
};

std::unique_ptr<PuRefit> PlbhacPlanner::prepare_refit(const BlockDone &done)
{
    const Pu *pu = find(done.worker);
    const double x = static_cast<double>(done.count);
    if (!pu || (!Refit::fits_exec(x, done.exec_s) && !Refit::fits_transfer(x, done.transfer_s)))
        return nullptr;
    return std::make_unique<Refit>(*pu, done);
}

void PlbhacPlanner::block_done_refitted(const BlockDone &done, PuRefit *refit)
{
    apply_done(done, dynamic_cast<Refit *>(refit));
}

void PlbhacPlanner::apply_done(const BlockDone &done, Refit *refit)
{
    Pu *pu = find(done.worker);
    if (!pu)
        return;
    // A refit is used when it was run for this block on the models as they are now (none
    // of the PU's other blocks was applied since it was prepared); else the adds happen
    // here. Either way the models end the same.
    if (refit && !(refit->ran && refit->worker == pu->info.id && refit->version == pu->models_version &&
                   refit->x == static_cast<double>(done.count) && refit->exec_s == done.exec_s &&
                   refit->transfer_s == done.transfer_s))
        refit = nullptr;
    else if (refit)
        ++refits_applied_;
    ++pu->models_version;
    Outstanding block;
    if (!pu->outstanding.empty()) {
        block = pu->outstanding.front();
        pu->outstanding.pop_front();
    }
    pu->idle_after = pu->outstanding.empty() ? done.offset : Pu::kNoBlock;
    // The block as the planner would price it now, before its models learn it: an
    // out-of-sample miss (see note_miss). Not a probe's, nor a small gap block's (see
    // `judged` below): sized away from the PU's regular blocks, they miss by misfit. The
    // blocks a PU takes while waiting for the training synchronisation count (its models
    // are fitted on its two training blocks by then): a short job's first solve is often
    // its final one, and without them its kinds' spreads were unknown there (seen in
    // simulation: 15 noisy CPUs beside a GPU, first runs 1.445 -> 1.383 of the optimum).
    const bool regular = block.phase != "gap" && block.phase != "probe";
    const double x = static_cast<double>(done.count);
    const double priced =
        (trained_ || pu->training_done >= 2) && pu->exec.ready() && done.count > 0 && (regular || x >= pu->fit_hi / 8)
            ? predict(*pu, done.count)
            : 0.0;
    // What StarPU's profiling does not see: the block could start when it was submitted or
    // when the PU's previous block ended, whichever came later, and the planner hears of
    // it at end_s. Time beyond exec + transfer in between is a per-block latency of the PU
    // (task dispatch, an accelerator driver's completion polling, the callback's wake-up)
    // that it pays all the same. Seen on the CPU + OpenCL (PoCL) node: the OpenCL
    // worker's k-means blocks ended 3.7 ms after exec + transfer, pass after pass, the CPU
    // worker's 0.2 ms; unpriced, the OpenCL worker's share ended every pass ~4 ms after
    // the CPU's (15% of a pass). It is priced as a constant per block (latency_s), not in
    // the transfer line: varying by milliseconds between blocks of nearly one size, it gave
    // that line slopes of either sign, and predictions tenths of a second off. A block
    // queued behind another hides it, and measures about none.
    const double profiled = done.exec_s + done.transfer_s;
    double latency = 0;
    const double unseen = done.end_s - std::max(done.submitted_s, pu->last_end_s) - profiled;
    if (done.submitted_s >= 0 && std::isfinite(unseen)) {
        latency = std::max(0.0, unseen);
        pu->note_latency(latency);
    }
    const double measured = profiled + latency;
    const double fit_hi_before = pu->fit_hi;  // the model's largest size before this block
    if (done.count > 0 && measured > 0 && std::isfinite(measured) && block.phase != "probe")
        pu->measured.emplace_back(static_cast<double>(done.count), measured);
    pu->last_end_s = std::max(pu->last_end_s, done.end_s);
    now_s_ = std::max(now_s_, done.end_s);
    if (priced > 0 && measured > 0 && std::isfinite(measured) && std::isfinite(priced))
        pu->note_miss(std::log(measured / priced));
    if (done.count > 0) {
        pu->size_lo = pu->size_lo > 0 ? std::min(pu->size_lo, x) : x;
        pu->size_hi = std::max(pu->size_hi, x);
    }
    if (Refit::fits_exec(x, done.exec_s)) {
        const size_t before = pu->exec.size();
        if (refit)
            std::swap(pu->exec, refit->exec);  // the old model is freed with the refit, outside the lock
        else
            Refit::add_measured(pu->exec, x, done.exec_s);
        pu->note_fit_range();
        // The model drops its history only when it accepts a new regime. Its measured
        // range is then that of the new run alone: narrow() and the trust region must see
        // it, not the range of the dropped history (seen in simulation: a model restarted
        // from two 54k-element blocks, with the range of a saved run up to 120k, was
        // trusted with a curve fitted at one size and gave a 225k block predicted at 9.5 s
        // that took 23 s; the next, queued, took 58 s).
        if (pu->exec.size() < before) {
            pu->regime_changed = true;
            pu->measured.clear();
            pu->saved_blocks.clear();
            pu->size_lo = pu->fit_lo;  // note_fit_range above: the restarted model's points
            pu->size_hi = pu->fit_hi;
        } else if (pu->exec.size() > before + 1) {
            // The model undid a regime change (a transient, see OnlineTimeModel): the sizes
            // of the history it restored are measured again.
            pu->size_lo = std::min(pu->size_lo, pu->fit_lo);
            pu->size_hi = std::max(pu->size_hi, pu->fit_hi);
        }
        // The model is rightly slow to believe one surprising block (a StarPU timing spike
        // must not move it), and with two blocks queued per PU the next block is already
        // sized when this one reports: a PU slowed 2.5x by a competing process would run
        // two more blocks sized for its old speed before the model accepts the change (seen
        // in simulation: three 30 s blocks predicted at 12 s, and the run waited for them).
        // So the planner hedges: while the model, refitted with this block, still misses it
        // by more than kSurprise, the PU's predictions are scaled by the miss and it
        // re-solves before its next block. A spike costs one block sized for a slower PU;
        // a real change is acted on at once and handed back to the model when it adapts.
        // The miss is measured against what the planner predicts, not the raw curve: while
        // the measured sizes are narrow the planner prices blocks proportionally through the
        // largest (see narrow), and a line fitted through a restarted model's few close sizes
        // can pass through a block it predicts 2.5x off (seen in simulation: two fast blocks
        // of a GPU just back to full speed, then one slowed 2.5x at a size 2% smaller; the
        // line through them fell with the size and "predicted" the slow block, the planner
        // priced the next at full speed, and the run ended 18% late).
        // Gap and probe blocks under an eighth of the largest size the model was fitted on
        // are not judged: sized to fill a small hole or to be small, they lie where a curve
        // fitted on the PU's regular blocks is least sure, and their miss says little of
        // the regular blocks the hedge then prices (seen in simulation: a warm CPU's 23k
        // and 49k-element gap blocks, below its 220k-1M blocks, ran in half the time the
        // curve gave them; the hedge priced the CPU at half, and its next block, 1.3M
        // elements predicted at 11.6 s, ran 26 s). A real change of speed shows on the next
        // regular block. (Regular blocks are always judged: after a slowdown they shrink.)
        const bool judged = regular || x >= fit_hi_before / 8;
        if (trained_ && pu->exec.ready() && judged) {
            const double expected = narrow(*pu) ? pu->exec.predict(anchor(*pu)) * x / anchor(*pu) : pu->exec.predict(x);
            const double r = done.exec_s / std::max(expected, 1e-12);
            const double scale = (r > 1.0 + kSurprise || r < 1.0 / (1.0 + kSurprise)) ? r : 1.0;
            if (scale != pu->surprise_scale) {
                pu->surprise_scale = scale;
                pu->regime_changed = true;
            }
        }
    }
    if (Refit::fits_transfer(x, done.transfer_s)) {
        if (refit)
            std::swap(pu->transfer, refit->transfer);
        else
            Refit::add_measured(pu->transfer, x, done.transfer_s);
    }
    ++measurements_since_solve_;
    if (block.predicted_s > 0 && block.phase != "probe")
        miss_since_solve_s_ = std::max(miss_since_solve_s_, std::abs(measured - block.predicted_s));

    if (!trained_) {
        if (++pu->training_done == 1) {
            pu->first_training_s = measured;
            if (first_finisher_ < 0) {
                first_finisher_ = done.worker;
                first_finish_s_ = measured;
            }
        }
        bool all = true;
        for (const auto &p : pus_)
            all &= p->training_done >= 2;
        if (all) {
            trained_ = true;
            training_end_s_ = now_s_;
        }
    } else if (block.phase != "probe" && block.predicted_s - measured > options_.gap_threshold_s) {
        // (A probe is not part of a step's plan: its finishing early leaves no gap.)
        pu->pending_gap_s = block.predicted_s - measured;
    }

    if (on_trace)
        on_trace({done.end_s, done.worker, pu->info.name, done.count, block.predicted_s, measured, block.phase,
                  block.step, pu->latency_s, pu->home_delay_s, done.exec_s, done.transfer_s, latency});
}

// Seen on the CPU + OpenCL (PoCL) node: k-means' OpenCL blocks ended on time, but their
// labels and partial sums reached main memory 3-9 ms later (StarPU's asynchronous copy
// back, completed by polling on two busy cores), and each pass waited for them: 2.7 ms of
// a 30 ms pass on average, invisible to the exec, transfer and latency the planner prices.
// Only a block after which the PU stayed idle until its results were home counts: with
// another block running behind it, the copy back waits for that one too (seen on the same
// node: grn's OpenCL results came home 40-60 ms after a block followed by another, 0.2-5
// ms after a last one), and it is the last block's delay that the job pays.
void PlbhacPlanner::results_home(const BlockHome &home)
{
    Pu *pu = find(home.worker);
    if (!pu || !std::isfinite(home.home_s) || !std::isfinite(home.end_s))
        return;
    if (pu->idle_after != home.offset || !pu->outstanding.empty())
        return;
    pu->note_home_delay(std::max(0.0, home.home_s - home.end_s));
}

std::unique_ptr<BlockPlanner> make_plbhac_planner(const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                                  const PlbhacOptions &options)
{
    return std::make_unique<PlbhacPlanner>(workers, rules, options);
}

}  // namespace hetpu
