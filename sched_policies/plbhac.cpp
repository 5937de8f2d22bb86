// plb-hac: PLB-HAC (seed 004) for divisible jobs. Ordinary tasks go to the worker with
// the earliest predicted finish when StarPU's perfmodel of their codelet is calibrated,
// else through the central FIFO (first idle capable worker): never dropped or stranded.
//
// Options come from HETPU_PLBHAC_{GAP_MS,TAIL,ALPHA,STEPS,XINIT,ALIGN,KEEP_MODELS}. HETPU_TRACE=FILE appends
// one JSON line per completed block (time, PU, size, predicted and measured duration,
// phase, virtual step) so users can see what the scheduler did.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <memory>

#include "runtime/core/json_writer.h"
#include "runtime/policy_registry.h"
#include "sched_policies/central_queue.h"
#include "sched_policies/core/plbhac_planner.h"

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

// Models learnt by the planners of earlier jobs, per job name and worker set: an iterative
// application (k-means runs one divisible job per iteration) trains once per process, not
// once per iteration. HETPU_PLBHAC_KEEP_MODELS=0 turns it off; unnamed jobs never share.
std::shared_ptr<hetpu::PlbhacMemory> memory_for(const std::string &job_name,
                                                const std::vector<hetpu::PlannerWorker> &workers)
{
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<hetpu::PlbhacMemory>> memories;
    if (job_name.empty())
        return nullptr;
    std::string key = job_name;
    for (const auto &w : workers)
        key += "|" + std::to_string(w.id);
    std::lock_guard<std::mutex> lock(mutex);
    auto &m = memories[key];
    if (!m)
        m = std::make_shared<hetpu::PlbhacMemory>();
    return m;
}

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &rules)
{
    hetpu::PlbhacOptions options;
    if (std::string why = hetpu::plbhac_options_from_env(options, [](const char *name) { return std::getenv(name); });
        !why.empty()) {
        std::fprintf(stderr, "hetpu: plb-hac: %s\n", why.c_str());
        return nullptr;
    }
    const char *keep = std::getenv("HETPU_PLBHAC_KEEP_MODELS");
    if (keep && *keep && std::strcmp(keep, "0") && std::strcmp(keep, "1")) {
        std::fprintf(stderr, "hetpu: plb-hac: HETPU_PLBHAC_KEEP_MODELS must be 1 (reuse the models of earlier jobs "
                             "of the same name, default) or 0\n");
        return nullptr;
    }
    if (!keep || std::strcmp(keep, "0"))
        options.memory = memory_for(rules.job_name, workers);
    auto planner = std::make_unique<hetpu::PlbhacPlanner>(workers, rules, options);
    if (const char *path = std::getenv("HETPU_TRACE"); path && *path) {
        auto trace = std::make_shared<TraceFile>();
        trace->file = std::fopen(path, "a");
        if (!trace->file) {
            std::fprintf(stderr, "hetpu: plb-hac: cannot append to HETPU_TRACE='%s'; unset it or fix the path\n", path);
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
    "plb-hac", "profile-based load balancing: online curve fits + Ipopt block sizes (PLB-HAC paper)", true);

}  // namespace

HETPU_REGISTER_POLICY(plbhac_policy, make_planner);
