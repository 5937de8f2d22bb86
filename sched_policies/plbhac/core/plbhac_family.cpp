// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_family.h"

#include "sched_policies/plbhac/core/plbhac_codelet_start.h"
#include "sched_policies/plbhac/core/plbhac_ladder.h"
#include "sched_policies/plbhac/core/plbhac_model_shelf.h"
#include "sched_policies/plbhac/core/plbhac_model_store.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"

namespace hetpu {

namespace {

struct ModelChoices {
    bool keep = true, persist = true, from_starpu = true, ladder = true;
};

// Reads the options; false after saying what is wrong.
bool read_settings(const PlannerContext &context, PlbhacOptions &options, ModelChoices &models)
{
    options.x_init = context.x_init;
    try {
        plbhac_options_from_env(options, context.env);
        const Settings settings(context.env);
        models.keep = settings.flag_or("HETPU_PLBHAC_KEEP_MODELS", true);
        models.persist = settings.flag_or("HETPU_PLBHAC_MODELS", true);
        models.from_starpu = settings.flag_or("HETPU_PLBHAC_STARPU_MODELS", true);
        models.ladder = settings.flag_or("HETPU_PLBHAC_LADDER", true);
    } catch (const PlbhacInputError &e) {
        context.report(e.what());
        return false;
    } catch (const SettingError &e) {
        context.report(e.what());
        return false;
    }
    return true;
}

}  // namespace

std::unique_ptr<BlockPlanner> make_plbhac_family(const PlannerContext &context,
                                                 const std::vector<PlannerWorker> &workers, const BlockRules &rules)
{
    PlbhacOptions options;
    ModelChoices models;
    if (!read_settings(context, options, models))
        return nullptr;
    PlbhacModelShelf &shelf = PlbhacModelShelf::process();
    if (models.keep)
        options.memory = shelf.memory_for(rules.job_name, rules.total, workers);
    if (models.persist && options.memory && !context.models_home.empty()) {
        const PlbhacModelKey key = plbhac_model_key(rules.job_name, rules.total, context.host, workers);
        const std::string path = plbhac_model_path(context.models_home, key);
        if (!path.empty()) {  // "": a job name that cannot name a file keeps its models in memory only
            shelf.load(path, key, *options.memory, context.say);
            options.on_learnt = [&shelf, path, say = context.say](const PlbhacMemory &m) {
                shelf.learnt(path, m, say);
            };
        }
    }
    // No models of its own (a first run of this job on this node): StarPU's calibration of
    // the block codelet, where a dmda run left one, spares the training phase (said only
    // when tracing: runs are otherwise silent).
    if (models.from_starpu && options.memory && options.memory->pus.empty() &&
        plbhac_memory_from_codelet_model(workers, rules, *options.memory) && context.trace)
        context.report((rules.job_name.empty() ? std::string("the job") : rules.job_name) +
                       " starts from StarPU's calibrated model of its codelet");
    // Cold or warm, the ladder's planner: promises and withdrawals the dispatcher can take
    // back, copies at the tail; a warm start only skips the probes.
    if (models.ladder) {
        auto ladder = std::make_unique<PlbhacLadderPlanner>(workers, rules, options);
        if (context.trace)
            ladder->on_trace = [trace = context.trace](const PlbhacTraceRecord &r) { trace(plbhac_trace_json(r)); };
        return ladder;
    }
    auto planner = std::make_unique<PlbhacPlanner>(workers, rules, options);
    if (context.trace)
        planner->on_trace = [trace = context.trace](const PlbhacTraceRecord &r) { trace(plbhac_trace_json(r)); };
    return planner;
}

}  // namespace hetpu
