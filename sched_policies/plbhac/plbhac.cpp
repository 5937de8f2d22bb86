// SPDX-License-Identifier: LGPL-2.1-or-later
// plb-hac: PLB-HAC for divisible jobs. Ordinary tasks go to the worker with
// the earliest predicted finish when StarPU's perfmodel of their codelet is calibrated,
// else through the central FIFO (first idle capable worker): never dropped or stranded.
//
// Options come from HETPU_PLBHAC_{GAP_MS,TAIL,ALPHA,STEPS,XINIT,ALIGN,TRUST,KEEP_MODELS,MODELS}.
// HETPU_PLBHAC_MODELS=off stops the models being read from and saved to
// $HETPU_HOME/plbhac-models/ (plbhac_model_store.h; `hetpu models` lists them). HETPU_TRACE=FILE appends
// one JSON line per completed block (time, PU, size, predicted and measured duration,
// phase, virtual step) so users can see what the scheduler did.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <memory>
#include <optional>

#include <unistd.h>

#include "common/settings.h"
#include "runtime/start/policy_registry.h"
#include "sched_policies/central_queue.h"
#include "sched_policies/plbhac/core/plbhac_codelet_start.h"
#include "sched_policies/plbhac/core/plbhac_model_store.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"

namespace {

// Appends trace records as JSON lines. Records arrive from completion callbacks, which
// the runner serialises, so no lock is needed here.
struct TraceFile {
    FILE *file = nullptr;
    ~TraceFile()
    {
        if (file)
            std::fclose(file);
    }
};

// Models learnt by the planners of earlier jobs, per job name, size and worker set (the
// key of the models on disk, plbhac_model_store.h): an iterative application (k-means runs
// one divisible job per iteration) trains once per process, not once per iteration.
// HETPU_PLBHAC_KEEP_MODELS=0 turns it off; unnamed jobs never share.
std::shared_ptr<hetpu::PlbhacMemory> memory_for(const std::string &job_name, uint64_t elements,
                                                const std::vector<hetpu::PlannerWorker> &workers)
{
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<hetpu::PlbhacMemory>> memories;
    if (job_name.empty())
        return nullptr;
    std::string key = job_name + "|" + std::to_string(elements);
    for (const auto &w : workers)
        key += "|" + std::to_string(w.id);
    std::lock_guard<std::mutex> lock(mutex);
    auto &m = memories[key];
    if (!m)
        m = std::make_shared<hetpu::PlbhacMemory>();
    return m;
}

// Models on disk (plbhac_model_store.h). A job's models are read when the process first
// runs a job of that name on that worker set, and written when a job ends: at once the
// first time (a crash later still leaves them), after that at most once a second, and
// the latest at exit. An iterative app (k-means: 21 jobs a run) would otherwise pay an
// fsync per iteration.
class DiskModels {
public:
    ~DiskModels()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto &[path, e] : entries_)
            if (e.dirty)
                write(path, e);
    }

    // Fills `memory` from the file when it is empty (the process's first job of this key).
    void load(const std::string &path, const hetpu::PlbhacModelKey &key, hetpu::PlbhacMemory &memory)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        Entry &e = entries_[path];
        if (e.loaded)
            return;
        e.loaded = true;
        e.file.key = key;
        std::string warning;
        if (auto f = hetpu::load_plbhac_models(path, key, warning)) {
            e.file.runs = f->runs;
            if (memory.pus.empty())
                memory = f->memory;
        } else if (!warning.empty()) {
            std::fprintf(stderr, "hetpu: plb-hac: %s\n", warning.c_str());
        }
    }

    void learnt(const std::string &path, const hetpu::PlbhacMemory &memory)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        Entry &e = entries_[path];
        e.file.memory = memory;
        ++e.file.runs;
        e.dirty = true;
        const double now = static_cast<double>(std::time(nullptr));
        if (e.written_unix_s == 0 || now - e.written_unix_s >= 1.0)
            write(path, e);
    }

private:
    struct Entry {
        bool loaded = false, dirty = false;
        double written_unix_s = 0;
        hetpu::PlbhacModelFile file;
    };
    static void write(const std::string &path, Entry &e)
    {
        e.file.saved_unix_s = static_cast<double>(std::time(nullptr));
        e.written_unix_s = e.file.saved_unix_s;
        e.dirty = false;
        try {
            hetpu::save_plbhac_models(path, e.file);
        } catch (const std::exception &ex) {
            // Losing the models costs the next job its warm start, not this job its result.
            std::fprintf(stderr, "hetpu: plb-hac: models not saved: %s\n", ex.what());
        }
    }
    std::mutex mutex_;
    std::map<std::string, Entry> entries_;
};

DiskModels &disk_models()
{
    static DiskModels models;
    return models;
}

std::string host_name()
{
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0)
        return "unknown";
    return buf;
}

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &rules)
{
    hetpu::PlbhacOptions options;
    try {
        hetpu::plbhac_options_from_env(options, hetpu::process_env);
    } catch (const hetpu::PlbhacInputError &e) {
        std::fprintf(stderr, "hetpu: plb-hac: %s\n", e.what());
        return nullptr;
    }
    const hetpu::Settings settings;
    bool keep = true, persist = true, from_starpu = true;
    std::optional<std::string> trace_path;
    try {
        keep = settings.flag_or("HETPU_PLBHAC_KEEP_MODELS", true);
        persist = settings.flag_or("HETPU_PLBHAC_MODELS", true);
        from_starpu = settings.flag_or("HETPU_PLBHAC_STARPU_MODELS", true);
        trace_path = settings.text("HETPU_TRACE");
    } catch (const hetpu::SettingError &e) {
        std::fprintf(stderr, "hetpu: plb-hac: %s\n", e.what());
        return nullptr;
    }
    if (keep)
        options.memory = memory_for(rules.job_name, rules.total, workers);
    if (persist && options.memory) {
        const hetpu::PlbhacModelKey key = hetpu::plbhac_model_key(rules.job_name, rules.total, host_name(), workers);
        const std::string path = hetpu::plbhac_model_path(hetpu::hetpu_home(), key);
        if (!path.empty()) {
            disk_models().load(path, key, *options.memory);
            options.on_learnt = [path](const hetpu::PlbhacMemory &m) { disk_models().learnt(path, m); };
        }
    }
    // No models of its own (a first run of this job on this node): StarPU's calibration of
    // the block codelet, where a dmda run left one, spares the training phase (said on
    // stderr only when tracing: runs are otherwise silent).
    if (from_starpu && options.memory && options.memory->pus.empty() &&
        hetpu::plbhac_memory_from_codelet_model(workers, rules, *options.memory) && trace_path)
        std::fprintf(stderr, "hetpu: plb-hac: %s starts from StarPU's calibrated model of its codelet\n",
                     rules.job_name.empty() ? "the job" : rules.job_name.c_str());
    auto planner = std::make_unique<hetpu::PlbhacPlanner>(workers, rules, options);
    if (trace_path) {
        auto trace = std::make_shared<TraceFile>();
        trace->file = std::fopen(trace_path->c_str(), "a");
        if (!trace->file) {
            std::fprintf(stderr, "hetpu: plb-hac: cannot append to HETPU_TRACE='%s'; unset it or fix the path\n",
                         trace_path->c_str());
            return nullptr;
        }
        planner->on_trace = [trace](const hetpu::PlbhacTraceRecord &r) {
            std::fprintf(trace->file, "%s\n", hetpu::plbhac_trace_json(r).c_str());
            std::fflush(trace->file);
        };
    }
    return planner;
}

struct starpu_sched_policy plbhac_policy = hetpu::central_queue_policy(
    "plb-hac", "profile-based load balancing: online curve fits + equal-finish block sizes (PLB-HAC paper)", true);

}  // namespace

HETPU_REGISTER_POLICY(plbhac_policy, make_planner);
