// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/slurm_allocation.h"

#include <cstdlib>
#include <stdexcept>

namespace hetpu::accounting {

namespace {

const char *nonempty(const EnvLookup &env, const char *name)
{
    const char *v = env(name);
    return v && *v ? v : nullptr;
}

long parse_count(const char *name, const char *text)
{
    char *end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 0)
        throw std::invalid_argument(std::string("Slurm variable ") + name + "='" + text + "' is not a count");
    return v;
}

// "2", "a100:2" or "gpu:a100:2": the count is after the last colon.
long parse_gres_count(const char *name, const char *text)
{
    std::string s = text;
    size_t colon = s.rfind(':');
    std::string count = colon == std::string::npos ? s : s.substr(colon + 1);
    return parse_count(name, count.c_str());
}

}  // namespace

std::optional<SlurmAllocation> read_slurm_allocation(const EnvLookup &env)
{
    const char *job = nonempty(env, "SLURM_JOB_ID");
    if (!job)
        return std::nullopt;
    SlurmAllocation a;
    a.job_id = job;
    if (const char *p = nonempty(env, "SLURM_JOB_PARTITION"))
        a.partition = p;
    if (const char *n = nonempty(env, "SLURM_JOB_NUM_NODES"))
        a.nodes = static_cast<int>(parse_count("SLURM_JOB_NUM_NODES", n));
    else if (const char *n2 = nonempty(env, "SLURM_NNODES"))
        a.nodes = static_cast<int>(parse_count("SLURM_NNODES", n2));
    if (a.nodes < 1)
        throw std::invalid_argument("Slurm variable SLURM_JOB_NUM_NODES must be at least 1");
    if (const char *c = nonempty(env, "SLURM_CPUS_ON_NODE"))
        a.cpus_per_node = static_cast<int>(parse_count("SLURM_CPUS_ON_NODE", c));
    if (const char *m = nonempty(env, "SLURM_MEM_PER_NODE"))
        a.mem_gib_per_node = parse_count("SLURM_MEM_PER_NODE", m) / 1024.0;
    else if (const char *mc = nonempty(env, "SLURM_MEM_PER_CPU"))
        a.mem_gib_per_node = parse_count("SLURM_MEM_PER_CPU", mc) / 1024.0 * a.cpus_per_node;
    if (const char *g = nonempty(env, "SLURM_GPUS_ON_NODE"))
        a.gpus_per_node = static_cast<int>(parse_count("SLURM_GPUS_ON_NODE", g));
    else if (const char *ids = nonempty(env, "SLURM_JOB_GPUS")) {
        int count = 1;
        for (const char *p = ids; *p; ++p)
            count += *p == ',';
        a.gpus_per_node = count;
    } else if (const char *gpn = nonempty(env, "SLURM_GPUS_PER_NODE"))
        a.gpus_per_node = static_cast<int>(parse_gres_count("SLURM_GPUS_PER_NODE", gpn));
    if (const char *r = nonempty(env, "SLURM_PROCID"))
        a.procid = static_cast<int>(parse_count("SLURM_PROCID", r));
    return a;
}

}  // namespace hetpu::accounting
