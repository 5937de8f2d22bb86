// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC models that persist across runs: what a planner learnt about its PUs (the
// measured points behind each execution and transfer model), saved per job name, job size,
// worker set and host under $HETPU_HOME/plbhac-models/, so that the next run of the same program
// on the same node starts in the execution phase instead of training (StarPU's dmda keeps
// its calibrated history in STARPU_HOME the same way). Pure C++, no StarPU.
//
// Why points and not fitted coefficients: a model rebuilt from its points goes on exactly
// as the saved one would (same window, same forgetting order, same basis functions, which
// are saved by name and refitted, not chosen again: a choice is ~100 fits, ~1 ms per PU,
// paid before the first job's first block), and the format does not change when
// the curve family does. Forgetting and the regime-change
// rule (online_model.h) then keep a loaded model adaptive: if the node changed, the first
// blocks miss their predictions, the planner hedges at once and the model restarts from
// the new measurements after two of them.
//
// File format (JSON, one object): {"format": "hetpu-plbhac-models", "version": 1, "job",
// "elements", "host", "workers": ["<id> <name> <kind>", ...], "runs", "saved_unix_s",
// "pus": [{"worker", "exec": [[x, s], ...], "exec_terms": ["1", "u", ...], "exec_held":
// [[x, s], ...], "transfer": [[x, s], ...], "size_lo", "size_hi", "latency": [s, ...],
// "home": [s, ...], "misses": [log-ratio, ...]}]}
// ("exec_terms", the execution curve's basis functions (curve_basis.h names), "exec_held",
// measurements the model held back as surprises (OnlineTimeModel::held_points), "latency",
// the PU's recent per-block latencies beyond its profiled times, and "home", its recent
// delays from a block's end to its results in main memory, and "misses", its recent blocks'
// log(measured / predicted) out of sample (the straggle hedge's evidence), are optional:
// files without them choose a curve again and load with no latency, no delay home and no
// misses; an unknown basis
// name makes the file unreadable; "elements", the job's size, is optional too: a file without it matches no run). A file with another format
// name or version, another key (a copied HETPU_HOME, a renamed file) or anything
// unparsable is ignored with a warning: the run then trains, as without a file, and
// overwrites it when it ends.
//
// Writes are atomic: a temporary file in the same directory (unique per process and
// call), flushed and fsync'ed, then rename(2)d over the target. Concurrent writers of the
// same job never leave a torn file; the last rename wins, which is the right answer (each
// holds a complete, equally valid model).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/plbhac/core/plbhac_warm_start.h"

namespace hetpu {

constexpr int kPlbhacModelsVersion = 1;

// Which models a file holds: a job of a size on a worker set on a host. The size is part
// of it because an element's cost usually depends on the job's other dimensions, which the
// name does not give: a matmul column costs m x k, and the same program run at n = 3072
// and n = 4096 (m = k = n) saved its models into one file, each run starting from the
// other's; on the real node the first blocks of n = 4096 were predicted at 0.14 s and ran
// 0.24 s, and both sizes ran 3-10% slower than from their own models. Workers are "<id> <name>
// <kind>" in the order of the planner's workers (StarPU numbers them the same way for the
// same configuration, and the memory matches PUs by id); the name without the details
// StarPU puts in parentheses (PoCL's there include its free memory, which changes).
struct PlbhacModelKey {
    std::string job;
    uint64_t elements = 0;  // the job's size (BlockRules::total); 0 in a file written without it
    std::string host;
    std::vector<std::string> workers;
    bool operator==(const PlbhacModelKey &o) const
    {
        return job == o.job && elements == o.elements && host == o.host && workers == o.workers;
    }
};

PlbhacModelKey plbhac_model_key(const std::string &job, uint64_t elements, const std::string &host,
                                const std::vector<PlannerWorker> &workers);

struct PlbhacModelFile {
    PlbhacModelKey key;
    unsigned runs = 0;        // jobs that have saved into this file
    double saved_unix_s = 0;  // when it was last written
    PlbhacMemory memory;
};

// <home>/plbhac-models
std::string plbhac_models_dir(const std::string &home);
// <home>/plbhac-models/<job>.<16 hex digits of a hash of the whole key>.json; "" when home
// is empty or the job name cannot be a file name (letters, digits, '_', '-', '.'; not
// starting with '.').
std::string plbhac_model_path(const std::string &home, const PlbhacModelKey &key);

std::string plbhac_models_to_json(const PlbhacModelFile &file);
// The models of `text`; throws std::runtime_error saying why it is not a models file of
// this version.
PlbhacModelFile plbhac_models_from_json(const std::string &text);

// Atomic write (see above); creates the directories. Throws std::runtime_error naming the
// failure.
void save_plbhac_models(const std::string &path, const PlbhacModelFile &file);

// The file's models when it exists, parses and holds `key`. A missing file is no warning
// (first run); otherwise `warning` says why it was ignored.
std::optional<PlbhacModelFile> load_plbhac_models(const std::string &path, const PlbhacModelKey &key,
                                                  std::string &warning);

// Every *.json under <home>/plbhac-models, sorted by path: parsed, or with the error.
struct PlbhacModelEntry {
    std::string path;
    std::optional<PlbhacModelFile> file;
    std::string error;
};
std::vector<PlbhacModelEntry> list_plbhac_models(const std::string &home);

}  // namespace hetpu
