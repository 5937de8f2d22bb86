// SPDX-License-Identifier: LGPL-2.1-or-later
// What the PLB-HAC planner's tests share: small job and worker set-ups, scripted block
// completions, simulated nodes, and planners that wrap PlbhacPlanner to record what it
// handed out or to report blocks as a real runner would (latencies the profiling misses,
// results that come home late). No StarPU, no wall-clock assertions.
#pragma once

#include <gtest/gtest.h>

#include <gsl/gsl_cdf.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched_policies/hdss/core/hdss_planner.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"
#include "tests/unit/thrown_message.h"
#include "tools/sim/optimum.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/simulator.h"

namespace hetpu::plbhac_test {

inline std::vector<PlannerWorker> workers(int n)
{
    std::vector<PlannerWorker> w;
    for (int i = 0; i < n; ++i)
        w.push_back({i, WorkerKind::Cpu, "pu" + std::to_string(i)});
    return w;
}

inline BlockRules rules(uint64_t total, uint64_t granule = 64)
{
    BlockRules r{total, granule, 0};
    normalize_block_rules(r);
    return r;
}

inline BlockDone done(int worker, uint64_t count, double seconds, double end_s = 0)
{
    return BlockDone{worker, 0, count, seconds, 0.0, end_s};
}

// Drives the training of PUs with linear times seconds_per_element[p] * x: all first blocks
// start together, completions in time order. Returns the size of each PU's second block.
inline std::vector<uint64_t> train_linear(PlbhacPlanner &p, const std::vector<double> &spe, uint64_t remaining)
{
    const int n = static_cast<int>(spe.size());
    std::vector<uint64_t> first(n), second(n);
    for (int w = 0; w < n; ++w)
        first[w] = p.next_block(w, remaining);
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return spe[a] < spe[b]; });
    for (int w : order) {
        p.block_done(done(w, first[w], spe[w] * first[w]));
        second[w] = p.next_block(w, remaining);
    }
    for (int w : order)
        p.block_done(done(w, second[w], spe[w] * second[w]));
    return second;
}

// Training blocks of 4096 elements, then 64 steps and no tail shrink: many regular blocks
// of one size, for tests that drive the planner block by block.
inline PlbhacOptions many_short_steps()
{
    PlbhacOptions o;
    o.x_init = 4096;
    o.tail_fraction = 1.0;
    o.steps = 64;
    return o;
}

// A linear simulated unit: exec = fixed + x / rate, transfer = latency + per_element * x.
inline sim::UnitSpec unit(const std::string &name, const std::string &cls, double rate, double fixed = 0,
                          double latency = 0, double per_element = 0, double noise = 0)
{
    sim::UnitSpec u;
    u.name = name;
    u.unit_class = cls;
    u.profile = {{1024, fixed + 1024 / rate}, {1 << 20, fixed + (1 << 20) / rate}};
    u.latency_s = latency;
    u.per_element_s = per_element;
    u.noise = noise;
    return u;
}

// A node of one H200 and 15 CPU workers, as its traces showed: CPUs A.cpu0-14 with timing
// scatter `cpu_noise`, then A.gpu0 (2% scatter, 0.2 ms and `gpu_per_element` seconds per
// element of transfer), their profiles sampled at doubling sizes from `smallest` to `largest`.
inline sim::Scenario fifteen_cpus_and_a_gpu(uint64_t workload, uint64_t granule, double cpu_noise,
                                            double gpu_per_element, double smallest, double largest,
                                            const std::function<double(double)> &cpu_time,
                                            const std::function<double(double)> &gpu_time)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = granule;
    for (int i = 0; i < 16; ++i) {
        const bool gpu = i == 15;
        sim::UnitSpec u;
        u.name = gpu ? "A.gpu0" : "A.cpu" + std::to_string(i);
        u.unit_class = gpu ? "gpu" : "cpu";
        u.noise = gpu ? 0.02 : cpu_noise;
        if (gpu) {
            u.latency_s = 2e-4;
            u.per_element_s = gpu_per_element;
        }
        for (double x = smallest; x <= largest; x *= 2)
            u.profile.push_back({x, gpu ? gpu_time(x) : cpu_time(x)});
        s.units.push_back(u);
    }
    return s;
}

// Forwards to the planner and remembers, for every block handed out, the planner state
// around the call; completions are matched to assignments per worker (FIFO, as the
// planner and the simulator both assume).
struct Assigned {
    int worker = -1;
    uint64_t size = 0;
    bool training_before = true;
    size_t solves_before = 0, solves_after = 0;
    unsigned solved_step_after = 0;
    std::string phase;  // from the completion record
    unsigned step = 0;
    double predicted_s = 0, measured_s = 0, start_s = 0, end_s = 0;
};

class Spy final : public BlockPlanner {
public:
    explicit Spy(PlbhacPlanner &p) : p_(p)
    {
        p_.on_trace = [this](const PlbhacTraceRecord &r) {
            auto &q = pending_[r.worker];
            ASSERT_FALSE(q.empty());
            Assigned &a = log[q.front()];
            q.erase(q.begin());
            EXPECT_EQ(a.size, r.size);
            a.phase = r.phase;
            a.step = r.step;
            a.predicted_s = r.predicted_s;
            a.measured_s = r.measured_s;
            a.end_s = r.time_s;
            a.start_s = r.time_s - r.measured_s;
            completed.push_back(&a - log.data());
        };
    }
    std::string name() const override { return p_.name(); }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t remaining) override
    {
        Assigned a;
        a.worker = worker;
        a.training_before = p_.training();
        a.solves_before = p_.solve_times_s().size();
        a.size = p_.next_block(worker, remaining);
        a.solves_after = p_.solve_times_s().size();
        a.solved_step_after = p_.solved_step();
        if (a.size) {
            // The cursor caps a block at what remains; record what will really run.
            a.size = std::min(a.size, remaining);
            pending_[worker].push_back(log.size());
            log.push_back(a);
        }
        return a.size;
    }
    void block_done(const BlockDone &d) override { p_.block_done(d); }

    std::vector<Assigned> log;      // in assignment order (reserve before the run)
    std::vector<size_t> completed;  // indices into log, in completion order

private:
    PlbhacPlanner &p_;
    std::map<int, std::vector<size_t>> pending_;
};

inline double mean(const std::vector<double> &v)
{
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

// Three machines, a CPU and a GPU each, different speeds; GPUs pay a per-block launch
// cost and a transfer, so tiny fixed blocks (greedy) waste time. About 13 s optimum.
inline sim::Scenario three_machines(uint64_t workload = 6'000'000)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = 64;
    s.x_init = 8192;
    s.units = {unit("A.gpu0", "gpu", 200e3, 0.02, 0.005, 2e-8, 0.02), unit("A.cpu", "cpu", 30e3, 0.001, 0, 0, 0.02),
               unit("B.gpu0", "gpu", 120e3, 0.02, 0.005, 2e-8, 0.02), unit("B.cpu", "cpu", 20e3, 0.001, 0, 0, 0.02),
               unit("C.gpu0", "gpu", 80e3, 0.02, 0.005, 2e-8, 0.02),  unit("C.cpu", "cpu", 10e3, 0.001, 0, 0, 0.02)};
    return s;
}

// Forwards to a planner, but reports each block of a worker without `hidden` seconds of
// its transfer: a per-block latency that StarPU's profiling does not see (task dispatch,
// an accelerator driver's completion polling), while the block's end time includes it.
class HidesLatency final : public BlockPlanner {
public:
    HidesLatency(BlockPlanner &p, std::vector<double> hidden) : p_(p), hidden_(std::move(hidden)) {}
    std::string name() const override { return p_.name(); }
    bool assigns_workers() const override { return p_.assigns_workers(); }
    uint64_t next_block(int worker, uint64_t remaining) override { return p_.next_block(worker, remaining); }
    void block_done(const BlockDone &d) override
    {
        BlockDone seen = d;
        seen.transfer_s = std::max(0.0, d.transfer_s - hidden_.at(static_cast<size_t>(d.worker)));
        p_.block_done(seen);
    }

private:
    BlockPlanner &p_;
    std::vector<double> hidden_;
};

// Forwards to a planner and tells it, after each block, that the block's results reached
// main memory `delay[worker]` seconds after its end (an accelerator's copy back, which the
// job's end waits for), or `busy_delay[worker]` when another block of the worker is in
// flight behind it (the copy back then waits for that one too); remembers each worker's
// latest end.
class ResultsComeHomeLate final : public BlockPlanner {
public:
    ResultsComeHomeLate(BlockPlanner &p, std::vector<double> delay, bool tell, std::vector<double> busy_delay = {})
        : p_(p), delay_(std::move(delay)), busy_delay_(std::move(busy_delay)), tell_(tell),
          last_end_(delay_.size(), 0.0), in_flight_(delay_.size(), 0)
    {}
    std::string name() const override { return p_.name(); }
    bool assigns_workers() const override { return p_.assigns_workers(); }
    uint64_t next_block(int worker, uint64_t remaining) override
    {
        const uint64_t size = p_.next_block(worker, remaining);
        if (size > 0)
            ++in_flight_.at(static_cast<size_t>(worker));
        return size;
    }
    void block_done(const BlockDone &d) override
    {
        p_.block_done(d);
        const size_t w = static_cast<size_t>(d.worker);
        last_end_.at(w) = std::max(last_end_.at(w), d.end_s);
        const bool busy = --in_flight_.at(w) > 0;
        const double delay = busy && !busy_delay_.empty() ? busy_delay_.at(w) : delay_.at(w);
        if (tell_)
            p_.extensions()->results_home({d.worker, d.offset, d.count, d.end_s, d.end_s + delay});
    }
    // When the job really ends: every worker's last results home.
    double job_end() const
    {
        double end = 0;
        for (size_t w = 0; w < delay_.size(); ++w)
            end = std::max(end, last_end_[w] + delay_[w]);
        return end;
    }
    double results_home_s(int worker) const { return last_end_.at(worker) + delay_.at(worker); }

private:
    BlockPlanner &p_;
    std::vector<double> delay_, busy_delay_;
    bool tell_;
    std::vector<double> last_end_;
    std::vector<unsigned> in_flight_;
};

// 1 CPU + 1 GPU whose advantage grows with the block size: 0.9x the CPU per element on
// 1,024 elements, ~20x on large blocks (an occupancy ramp, as node_grow20_* in
// bench/scenarios), 100M elements, ~100 s at the optimum.
inline sim::Scenario growing_advantage_node()
{
    sim::Scenario s;
    s.workload = 100'000'000;
    s.granule = 64;
    s.x_init = 1024;
    const double cpu_spe = 1.0 / 50000, gpu_spe = cpu_spe / 20;
    sim::UnitSpec cpu, gpu;
    cpu.name = "A.cpu";
    cpu.unit_class = "cpu";
    cpu.noise = 0.03;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.noise = 0.02;
    gpu.latency_s = 0.005;
    for (double x = 64; x <= (1 << 28); x *= 2) {
        cpu.profile.push_back({x, x * cpu_spe});
        const double u = std::min(x / 4096, 1.0);
        gpu.profile.push_back({x, (x + 12 * 4096 * (2 * u - u * u)) * gpu_spe});
    }
    s.units = {cpu, gpu};
    return s;
}

// A node of one CPU and one GPU whose profiles are the given times at sizes doubling from
// `smallest` to 2^30 elements.
inline sim::Scenario cpu_gpu_node(uint64_t workload, uint64_t granule, uint64_t x_init, double smallest, double noise,
                                  const std::function<double(double)> &cpu_s,
                                  const std::function<double(double)> &gpu_s)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = granule;
    s.x_init = x_init;
    sim::UnitSpec cpu, gpu;
    cpu.name = "A.cpu";
    cpu.unit_class = "cpu";
    cpu.noise = noise;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.noise = noise;
    for (double x = smallest; x <= (1 << 30); x *= 2) {
        cpu.profile.push_back({x, cpu_s(x)});
        gpu.profile.push_back({x, gpu_s(x)});
    }
    s.units = {cpu, gpu};
    return s;
}

// End-time spread and makespan of one simulated run.
struct RunEnds {
    double makespan_s = 0, spread_s = 0;
};

inline RunEnds run_ends(const sim::Scenario &s, const PlbhacOptions &o, uint64_t seed)
{
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    const sim::SimResult r = sim::simulate(s, p, {seed, false});
    std::map<int, double> last_end;
    for (const auto &b : r.trace)
        last_end[b.unit] = std::max(last_end[b.unit], b.end_s);
    double first = r.makespan_s;
    for (const auto &[u, end] : last_end)
        first = std::min(first, end);
    return {r.makespan_s, r.makespan_s - first};
}

// 15 CPU workers with 20% timing scatter beside one steady GPU 170x as fast as one of them:
// the CPUs are worth 8% of the node (grn with 600 genes on a node of one H200, as its
// traces showed), and a job of ~0.1 s is one step, one block per CPU.
inline sim::Scenario noisy_cpus_beside_a_steady_gpu()
{
    sim::Scenario s = fifteen_cpus_and_a_gpu(
        179700, 1, 0.2, 1e-9, 1, 1 << 18, [](double x) { return 1.15e-4 * x + 2e-5; },
        [](double x) { return 6.7e-7 * x + 4e-4; });
    s.x_init = s.workload / (32 * 16);
    return s;
}

// Saved models of `s` as a warm start sees them: every PU measured at sizes around its
// optimal share, its misses of spread `cpu_spread` (CPUs) or `gpu_spread` (GPU) laid out
// at the normal law's quantiles.
inline std::shared_ptr<PlbhacMemory> saved_models(const sim::Scenario &s, double cpu_spread, double gpu_spread)
{
    auto memory = std::make_shared<PlbhacMemory>();
    for (size_t i = 0; i < s.units.size(); ++i) {
        const bool gpu = s.units[i].unit_class == "gpu";
        const sim::SimulatedUnit unit(s.units[i]);
        PlbhacPuMemory m;
        m.worker = static_cast<int>(i);
        for (double x :
             gpu ? std::vector<double>{20000, 60000, 120000, 160000} : std::vector<double>{100, 300, 600, 900})
            m.exec.add(x, unit.exec_time(x));
        m.size_lo = m.exec.points().front().first;
        m.size_hi = m.exec.points().back().first;
        for (int k = 0; k < 16; ++k)
            m.misses.push_back((gpu ? gpu_spread : cpu_spread) * gsl_cdf_ugaussian_Pinv((k + 0.5) / 16));
        memory->pus.push_back(std::move(m));
    }
    return memory;
}

}  // namespace hetpu::plbhac_test
