// plb-hac: PLB-HAC (seed 004) for divisible jobs. Ordinary tasks go to the worker with
// the earliest predicted finish when StarPU's perfmodel of their codelet is calibrated,
// else through the central FIFO (first idle capable worker): never dropped or stranded.
//
// Options come from HETPU_PLBHAC_{GAP_MS,TAIL,ALPHA,STEPS,XINIT}. HETPU_TRACE=FILE appends
// one JSON line per completed block (time, PU, size, predicted and measured duration,
// phase, virtual step) so users can see what the scheduler did.
#include <cstdio>
#include <cstdlib>
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

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &rules)
{
    hetpu::PlbhacOptions options;
    if (std::string why = hetpu::plbhac_options_from_env(options, [](const char *name) { return std::getenv(name); });
        !why.empty()) {
        std::fprintf(stderr, "hetpu: plb-hac: %s\n", why.c_str());
        return nullptr;
    }
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
