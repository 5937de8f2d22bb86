// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu calibrate`: the StarPU side. Every worker that can run the app's codelet gets one
// block of the same size at the same time (a divisible job of size x times the workers,
// cut by a planner that hands each worker x), StarPU's profiling gives each block's
// execution time, the energy sources give the energy, and the repetitions go on until the
// statistics core says the means are precise. Decisions live in the pure files beside it.
#include "tools/calibrate/calibrate_command.h"

#include <hetpu/hetpu.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>

#include "accounting_hook/core/energy_attribution.h"
#include "apps/fft2d/fft2d_codelets.h"
#include "apps/fft2d/fft2d_job.h"
#include "apps/matmul/matmul_codelets.h"
#include "apps/matmul/matmul_job.h"
#include "config.h"
#include "runtime/start/opencl_on_cpu.h"
#include "runtime/start/policy_registry.h"
#include "sched_policies/component_policy.h"
#include "sched_policies/pareto/core/pareto_planner.h"
#include "sched_policies/pareto/core/profile_store.h"
#include "tools/calibrate/calibrate_options.h"
#include "tools/calibrate/profile_writer.h"

namespace hetpu::calibrate {

namespace {

using accounting::attribute_repetition_energy;
using accounting::DeviceReading;
using accounting::ProcessorEnergy;
using accounting::ProcessorRun;

// Each eligible worker gets total / workers elements, once: the calibration's placement.
std::unique_ptr<BlockPlanner> equal_share_planner(const std::vector<PlannerWorker> &workers, const BlockRules &rules)
{
    const uint64_t share = rules.total / workers.size();
    return std::make_unique<ParetoPlanner>("calibrate", workers, std::vector<uint64_t>(workers.size(), share));
}

struct starpu_sched_policy calibrate_policy =
    component_policy("calibrate", "internal to hetpu calibrate: one equal block per worker at once", false);

energy::WorkerType energy_type(enum starpu_worker_archtype t)
{
    return t == STARPU_CUDA_WORKER     ? energy::WorkerType::cuda
           : t == STARPU_OPENCL_WORKER ? energy::WorkerType::opencl
                                       : energy::WorkerType::cpu;
}

WorkerKind kind_of(enum starpu_worker_archtype t)
{
    return t == STARPU_CUDA_WORKER     ? WorkerKind::Cuda
           : t == STARPU_OPENCL_WORKER ? WorkerKind::OpenCL
                                       : WorkerKind::Cpu;
}

// One repetition of the app with `total` elements; fills the runner's report.
class AppRunner {
public:
    virtual ~AppRunner() = default;
    virtual int run(uint64_t total, hetpu_divisible_report &report) = 0;
};

class MatmulRunner final : public AppRunner {
public:
    explicit MatmulRunner(uint64_t dim) : dim_(dim) { matmul::codelets_init(); }
    ~MatmulRunner() override { matmul::codelets_shutdown(); }
    int run(uint64_t total, hetpu_divisible_report &report) override
    {
        if (!problem_ || problem_->n != total)
            problem_ = std::make_unique<matmul::Problem<double>>(dim_, total, dim_, 42);
        matmul::Options o;
        o.m = o.k = dim_;
        o.n = total;
        return matmul::run_once(*problem_, o, &report);
    }

private:
    uint64_t dim_;
    std::unique_ptr<matmul::Problem<double>> problem_;
};

class Fft2dRunner final : public AppRunner {
public:
    explicit Fft2dRunner(uint64_t row_length) : n_(row_length) {}
    ~Fft2dRunner() override { fft2d::codelets_shutdown(); }
    int init() { return fft2d::codelets_init({n_}); }
    int run(uint64_t total, hetpu_divisible_report &report) override
    {
        if (!problem_ || problem_->rows != total)
            problem_ = std::make_unique<fft2d::Problem>(total, n_, 42);
        else
            problem_->reset();
        fft2d::Options o;
        o.m = total;
        o.n = n_;
        return fft2d::run_row_phase(*problem_, o, &report);
    }

private:
    uint64_t n_;
    std::unique_ptr<fft2d::Problem> problem_;
};

// Idle power of each sensor-covered device, sampled before any work (the sensor's share
// that is not dynamic energy).
double idle_power(energy::EnergySource &src, energy::Device d)
{
    const double j0 = src.joules(d);
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double j1 = src.joules(d);
    return (j1 - j0) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Per size: the samples of every processor, and whether it is finished.
struct Point {
    uint64_t x = 0;
    std::vector<SampleSeries> times, energies;
    std::vector<std::string> sources;
    double busy_sum = 0;
    unsigned reps = 0;
    bool warm = false, done = false;
};

// Prints every size's means and writes the profile CSV (with P_S for HTPOPTA and how the
// energy was measured) to `path`.
int write_profiles(const Options &options, const std::string &path, const std::vector<Point> &points,
                   const std::vector<std::string> &names, const std::vector<energy::WorkerType> &types,
                   energy::EnergySelection &energy, const energy::PowerModel &model, const double idle_w[2],
                   bool ocl_on_cpu)
{
    std::vector<std::string> comments;
    std::vector<ProfileRow> rows;
    for (const Point &pt : points) {
        std::printf("%s size %llu (%u reps):", options.app.c_str(), static_cast<unsigned long long>(pt.x), pt.reps);
        for (std::size_t i = 0; i < names.size(); ++i) {
            ProfileRow r{names[i],
                         pt.x,
                         pt.times[i].mean(),
                         pt.energies[i].mean(),
                         pt.sources[i],
                         pt.reps,
                         pt.times[i].relative_half_width(options.rule.confidence),
                         pt.energies[i].relative_half_width(options.rule.confidence)};
            const bool precise = pt.times[i].precise(options.rule) && pt.energies[i].precise(options.rule);
            std::printf("  %s %.4g s ±%.1f%% %.4g J ±%.1f%% (%s)%s", names[i].c_str(), r.time_s, 100 * r.time_rel_ci,
                        r.energy_j, 100 * r.energy_rel_ci, r.energy_source.c_str(), precise ? "" : " IMPRECISE");
            rows.push_back(r);
        }
        std::printf("\n");
    }
    std::fflush(stdout);

    // P_S for HTPOPTA: the sensors' idle power, or the model's idle power of the workers.
    double base_power = 0;
    for (energy::Device d : {energy::Device::cpu, energy::Device::gpu}) {
        energy::EnergySource *src = energy.for_device(d);
        if (src && src->measured())
            base_power += idle_w[static_cast<int>(d)];
        else if (src)
            for (energy::WorkerType t : types)
                if (energy::device_of(t, ocl_on_cpu) == d)
                    base_power += model.of(t).idle_w;
    }
    std::string srcs;
    for (const auto &s : energy.sources)
        srcs += (srcs.empty() ? "" : ", ") + s->name() + (s->measured() ? " (sensor)" : " (model estimate, no sensor)");
    char line[256];
    std::snprintf(line, sizeof line, "hetpu calibrate --app %s --dim %llu, precision %.3g at %.0f%% confidence",
                  options.app.c_str(), static_cast<unsigned long long>(options.dim), options.rule.precision,
                  100 * options.rule.confidence);
    comments.push_back(line);
    comments.push_back(options.app == "matmul" ? "size = columns of B and C (m = k = dim), double precision"
                                               : "size = rows of length dim, complex double, forward FFT");
    comments.push_back("energy sources: " + srcs);
    bool any_model = false;
    for (const auto &src : energy.sources)
        any_model |= !src->measured();
    if (any_model) {
        std::snprintf(line, sizeof line, "model_power_w cpu=%g/%g opencl=%g/%g cuda=%g/%g (active/idle per worker)",
                      model.cpu_core.active_w, model.cpu_core.idle_w, model.opencl.active_w, model.opencl.idle_w,
                      model.cuda.active_w, model.cuda.idle_w);
        comments.push_back(line);
    }
    try {
        write_file_atomically(path, format_profile_csv(comments, base_power, rows));
    } catch (const std::runtime_error &e) {
        std::fprintf(stderr, "hetpu calibrate: %s\n", e.what());
        return 1;
    }
    std::printf("profiles: %s (%zu points, P_S %.1f W)\n", path.c_str(), rows.size(), base_power);
    return 0;
}

int run_calibration(const Options &options)
{
    const std::string path = options.output.empty() ? profile_path(hetpu_home(), options.app) : options.output;
    if (path.empty()) {
        std::fprintf(stderr, "hetpu calibrate: set HETPU_HOME (or HOME) or give --output FILE.csv\n");
        return 1;
    }
    std::unique_ptr<AppRunner> runner;
    if (options.app == "matmul") {
        runner = std::make_unique<MatmulRunner>(options.dim);
    } else {
        auto fft = std::make_unique<Fft2dRunner>(options.dim);
        if (fft->init() != 0)
            return 1;
        runner = std::move(fft);
    }

    const bool ocl_on_cpu = opencl_workers_run_on_cpu();
    const int cores = options.cores_per_socket > 0
                          ? options.cores_per_socket
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const energy::PowerModel model = energy::PowerModel::from_tdp(options.cpu_tdp_w, cores, options.gpu_tdp_w);
    energy::EnergySelection energy = energy::open_energy_sources(model, nullptr, ocl_on_cpu);
    for (const std::string &note : energy.notes)
        std::printf("energy: %s\n", note.c_str());
    double idle_w[2] = {0, 0};
    for (energy::Device d : {energy::Device::cpu, energy::Device::gpu}) {
        energy::EnergySource *src = energy.for_device(d);
        if (!src)
            continue;
        if (src->measured()) {
            idle_w[static_cast<int>(d)] = idle_power(*src, d);
            std::printf("energy: %s device measured by %s (idle %.1f W)\n", energy::device_name(d), src->name().c_str(),
                        idle_w[static_cast<int>(d)]);
        } else {
            std::printf("energy: %s device: no sensor, using the model source (estimates from busy time: "
                        "CPU core %.1f W active / %.1f W idle, OpenCL %.1f / %.1f W, CUDA %.1f / %.1f W)\n",
                        energy::device_name(d), model.cpu_core.active_w, model.cpu_core.idle_w, model.opencl.active_w,
                        model.opencl.idle_w, model.cuda.active_w, model.cuda.idle_w);
        }
    }

    std::vector<std::string> names;
    std::vector<energy::WorkerType> types;
    static hetpu_divisible_report report;  // large: not on the stack

    std::vector<Point> points;
    for (uint64_t x : options.sizes)
        points.push_back(Point{x, {}, {}, {}, 0, 0, false, false});

    // One repetition of every unfinished size per round, rather than all repetitions of
    // one size in a row: on a shared machine the noise comes in bursts (other processes),
    // and interleaving spreads a burst over all sizes instead of making one size look
    // slow and its neighbour fast, which an exact Pareto search would happily exploit.
    for (bool pending = true; pending;) {
        pending = false;
        for (Point &pt : points) {
            if (pt.done)
                continue;
            const uint64_t x = pt.x;
            // A first, discarded repetition per size: kernels are compiled and plans baked
            // on first use of a block shape (PoCL, clFFT). The very first one also tells
            // which workers can run the codelet (blocks are total / eligible workers).
            if (!pt.warm) {
                const uint64_t guess = names.empty() ? starpu_worker_get_count() : names.size();
                if (int rc = runner->run(guess * x, report); rc != 0) {
                    std::fprintf(stderr, "hetpu calibrate: %s warm-up run failed: %s\n", options.app.c_str(),
                                 std::strerror(-rc));
                    return 1;
                }
                if (names.empty()) {
                    std::vector<PlannerWorker> workers;
                    for (unsigned i = 0; i < report.nworkers; ++i) {
                        workers.push_back(
                            {report.workers[i].workerid, kind_of(report.workers[i].type), report.workers[i].name});
                        types.push_back(energy_type(report.workers[i].type));
                    }
                    names = processor_names(workers);
                }
                pt.warm = true;
                pt.times.resize(names.size());
                pt.energies.resize(names.size());
                pt.sources.assign(names.size(), "");
            }
            double before[2] = {0, 0};
            for (energy::Device d : {energy::Device::cpu, energy::Device::gpu})
                if (energy::EnergySource *src = energy.for_device(d))
                    before[static_cast<int>(d)] = src->joules(d);
            const auto t0 = std::chrono::steady_clock::now();
            if (int rc = runner->run(names.size() * x, report); rc != 0) {
                std::fprintf(stderr, "hetpu calibrate: %s run of %zu x %llu failed: %s\n", options.app.c_str(),
                             names.size(), static_cast<unsigned long long>(x), std::strerror(-rc));
                return 1;
            }
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::vector<ProcessorRun> runs;
            bool ok = report.nworkers == names.size();
            for (unsigned i = 0; ok && i < report.nworkers; ++i) {
                ok = report.workers[i].blocks == 1 && report.workers[i].elements == x;
                runs.push_back({types[i], report.workers[i].busy_s});
            }
            if (!ok) {
                std::fprintf(stderr,
                             "hetpu calibrate: internal error: a worker did not get exactly one block of %llu\n",
                             static_cast<unsigned long long>(x));
                return 1;
            }
            std::vector<DeviceReading> readings;
            for (energy::Device d : {energy::Device::cpu, energy::Device::gpu})
                if (energy::EnergySource *src = energy.for_device(d))
                    readings.push_back({d, src->name(), src->measured(), before[static_cast<int>(d)], src->joules(d),
                                        idle_w[static_cast<int>(d)]});
            const std::vector<ProcessorEnergy> e =
                attribute_repetition_energy(runs, readings, elapsed, model, ocl_on_cpu);
            for (std::size_t i = 0; i < names.size(); ++i) {
                pt.times[i].add(runs[i].busy_s);
                pt.energies[i].add(e[i].dynamic_j);
                pt.sources[i] = e[i].source;
                pt.busy_sum = std::max(pt.busy_sum, runs[i].busy_s * static_cast<double>(pt.times[i].size()));
            }
            ++pt.reps;
            std::vector<const SampleSeries *> all;
            for (std::size_t i = 0; i < names.size(); ++i) {
                all.push_back(&pt.times[i]);
                all.push_back(&pt.energies[i]);
            }
            pt.done = should_stop(all, options.rule) ||
                      (pt.reps >= options.rule.min_reps && pt.busy_sum > options.max_seconds);
            pending |= !pt.done;
        }
    }

    return write_profiles(options, path, points, names, types, energy, model, idle_w, ocl_on_cpu);
}

}  // namespace

int calibrate_command(int argc, char **argv)
{
    Options options;
    try {
        options = parse_options(argc, argv);
    } catch (const CLI::ParseError &e) {
        std::fprintf(stderr, "hetpu calibrate: %s\nRun with --help for more information.\n", e.what());
        return 2;
    }
    if (options.help) {
        std::fputs(usage().c_str(), stdout);
        return 0;
    }
    register_policy(&calibrate_policy, equal_share_planner);
    setenv("STARPU_SCHED", "calibrate", 1);
    int rc = hetpu_init(nullptr);
    if (rc != 0) {
        std::fprintf(stderr, "hetpu calibrate: cannot start StarPU: %s\n", std::strerror(rc < 0 ? -rc : rc));
        return 1;
    }
    int status;
    try {
        status = run_calibration(options);
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "hetpu calibrate: not enough memory; choose smaller --sizes or --dim\n");
        status = 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu calibrate: %s\n", e.what());
        status = 1;
    }
    hetpu_shutdown();
    return status;
}

}  // namespace hetpu::calibrate
