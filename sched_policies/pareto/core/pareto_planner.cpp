// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/pareto_planner.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sched_policies/pareto/core/hepopta.h"

namespace hetpu {

std::vector<std::string> processor_names(const std::vector<PlannerWorker> &workers)
{
    std::map<WorkerKind, int> count;
    std::vector<std::string> names;
    for (const PlannerWorker &w : workers) {
        const char *kind = w.kind == WorkerKind::Cpu      ? "cpu"
                           : w.kind == WorkerKind::OpenCL ? "opencl"
                           : w.kind == WorkerKind::Cuda   ? "cuda"
                                                          : "other";
        names.push_back(kind + std::to_string(count[w.kind]++));
    }
    return names;
}

namespace {

// A cached front is used only if it fits the instance it is used for: same granule, one
// size per processor, sizes adding up to the workload. The key already pins the profile
// content; this guards against a file edited by hand.
bool usable_front(const CachedFront &c, const GranularProfiles &g)
{
    if (c.granule != g.granule || c.front.empty())
        return false;
    for (const Distribution &d : c.front) {
        if (d.sizes.size() != g.profiles.size())
            return false;
        Granules sum = 0;
        for (Granules x : d.sizes)
            sum += x;
        if (sum != g.workload)
            return false;
    }
    return true;
}

}  // namespace

ParetoPlan make_pareto_plan(const ProfileSet &profiles, const std::vector<PlannerWorker> &workers,
                            const BlockRules &rules, const ParetoPlanOptions &options)
{
    ParetoPlan out;
    const std::vector<std::string> names = processor_names(workers);
    // The profiles of the processors present in this run, in worker order.
    ProfileSet usable;
    std::vector<std::size_t> worker_of;  // usable processor -> index into workers
    for (std::size_t w = 0; w < workers.size(); ++w) {
        const int idx = profiles.find(names[w]);
        if (idx < 0) {
            out.notes.push_back("worker " + workers[w].name + " (" + names[w] + ") has no profile: left idle");
            continue;
        }
        usable.processors.push_back(profiles.processors[idx]);
        worker_of.push_back(w);
    }
    for (const CsvProcessor &p : profiles.processors)
        if (std::find(names.begin(), names.end(), p.name) == names.end())
            out.notes.push_back("profile of '" + p.name + "' matches no worker of this run: not used");
    if (usable.processors.empty())
        throw std::runtime_error("no profiled processor is among this run's workers (" +
                                 std::to_string(workers.size()) + " workers; profiles name " +
                                 std::to_string(profiles.processors.size()) + " processors)");

    std::vector<Distribution> front;
    GranularProfiles g;
    FrontKey key;
    key.profile_path = options.profile_path;
    key.profile_hash = options.profile_hash;
    key.workload = rules.total;
    key.objective = options.objective;
    key.base_power_w = options.objective == EnergyObjective::Total ? options.base_power_w : 0.0;
    key.processors = usable.names();
    try {
        g = to_granules(usable, rules.total);
        CachedFront cached;
        if (options.cache && options.cache->load(key, cached) && usable_front(cached, g)) {
            front = std::move(cached.front);
            out.cached = true;
        } else {
            front = options.objective == EnergyObjective::Dynamic
                        ? hepopta(g.profiles, g.workload)
                        : htpopta(g.profiles, g.workload, options.base_power_w);
            if (options.cache)
                options.cache->store(key, CachedFront{g.granule, front});
        }
    } catch (const UnreachableWorkloadError &) {
        throw UnreachableWorkloadError("the job's " + std::to_string(rules.total) +
                                       " elements cannot be formed from the profiled sizes; calibrate sizes that add "
                                       "up to it");
    }
    if (front.empty())
        throw std::runtime_error("empty Pareto front");
    out.front_size = front.size();
    out.chosen_index = pick_tradeoff(front, options.objective, options.tradeoff);
    out.chosen = front[out.chosen_index];
    out.shares.assign(workers.size(), 0);
    for (std::size_t i = 0; i < worker_of.size(); ++i) {
        const std::uint64_t share = static_cast<std::uint64_t>(out.chosen.sizes[i]) * g.granule;
        if (share != 0 && (share % rules.granule != 0 || share < rules.min_block))
            throw std::runtime_error("the chosen share " + std::to_string(share) + " of " + workers[worker_of[i]].name +
                                     " is not a multiple of the job's granule " + std::to_string(rules.granule) +
                                     " of at least its minimum block " + std::to_string(rules.min_block));
        out.shares[worker_of[i]] = share;
    }
    return out;
}

ParetoPlanner::ParetoPlanner(std::string name, const std::vector<PlannerWorker> &workers,
                             std::vector<std::uint64_t> shares)
    : name_(std::move(name)), left_(std::move(shares))
{
    for (const PlannerWorker &w : workers)
        ids_.push_back(w.id);
    left_.resize(ids_.size(), 0);
}

std::uint64_t ParetoPlanner::next_block(int worker, std::uint64_t remaining)
{
    for (std::size_t i = 0; i < ids_.size(); ++i)
        if (ids_[i] == worker) {
            const std::uint64_t share = std::min(left_[i], remaining);
            left_[i] = 0;
            return share;
        }
    return 0;
}

}  // namespace hetpu
