// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/slurm_allocation.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
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

// SLURM_JOB_CPUS_PER_NODE: "4", "4(x3)" or "4(x2),2", node by node; the first node's count
// (the allocation is taken as homogeneous).
long parse_first_node_count(const char *name, const char *text)
{
    std::string s = text;
    return parse_count(name, s.substr(0, s.find_first_of("(,")).c_str());
}

}  // namespace

JobTres parse_job_tres(const std::string &tres)
{
    JobTres t;
    size_t start = 0;
    while (start < tres.size()) {
        size_t comma = tres.find(',', start);
        const std::string item = tres.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        start = comma == std::string::npos ? tres.size() : comma + 1;
        const size_t eq = item.find('=');
        if (eq == std::string::npos)
            continue;
        const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        if (key == "cpu")
            t.cpus = static_cast<int>(parse_count("TRES cpu", value.c_str()));
        else if (key == "node")
            t.nodes = static_cast<int>(parse_count("TRES node", value.c_str()));
        else if (key == "gres/gpu")
            t.gpus = static_cast<int>(parse_count("TRES gres/gpu", value.c_str()));
        else if (key == "mem") {
            // Slurm prints memory in the largest unit that divides it: 1000M, 2G, 1.50T.
            char *end = nullptr;
            const double v = std::strtod(value.c_str(), &end);
            double mib_per_unit = 0;
            if (end != value.c_str() && v >= 0 && end[0] && !end[1])
                mib_per_unit = end[0] == 'K'   ? 1.0 / 1024
                               : end[0] == 'M' ? 1
                               : end[0] == 'G' ? 1024
                               : end[0] == 'T' ? 1024 * 1024
                                               : 0;
            if (mib_per_unit == 0)
                throw std::invalid_argument("Slurm TRES mem='" + value + "' is not a memory size");
            t.mem_gib = v * mib_per_unit / 1024.0;
            t.has_mem = true;
        }
    }
    return t;
}

std::string scontrol_job_tres(const std::string &job_id)
{
    // "17" (a job) or "17.0" (a step); nothing else reaches the shell.
    const size_t dot = job_id.find('.');
    if (job_id.empty() || dot == 0 || dot + 1 == job_id.size() ||
        (dot != std::string::npos && job_id.find('.', dot + 1) != std::string::npos))
        return "";
    for (char c : job_id)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.')
            return "";
    const char *what = dot == std::string::npos ? "job" : "step";
    FILE *p = ::popen(("scontrol show " + std::string(what) + " -o " + job_id + " 2>/dev/null").c_str(), "r");
    if (!p)
        return "";
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    if (::pclose(p) != 0)
        return "";
    // "... TRES=cpu=2,mem=1000M,node=1,billing=4,gres/gpu=1 Socks/Node=* ..."
    size_t at = out.find(" TRES=");
    if (at == std::string::npos)
        return "";
    at += 6;
    return out.substr(at, out.find_first_of(" \n", at) - at);
}

std::optional<SlurmAllocation> read_slurm_allocation(const EnvLookup &env, const JobTresQuery &query)
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
    // slurmd sets SLURM_CPUS_ON_NODE (and the GPU variables) in batch scripts and job steps.
    const char *cpus_on_node = nonempty(env, "SLURM_CPUS_ON_NODE");
    if (cpus_on_node)
        a.cpus_per_node = static_cast<int>(parse_count("SLURM_CPUS_ON_NODE", cpus_on_node));
    else if (const char *c = nonempty(env, "SLURM_JOB_CPUS_PER_NODE"))
        a.cpus_per_node = static_cast<int>(parse_first_node_count("SLURM_JOB_CPUS_PER_NODE", c));
    bool mem_given = true, gpus_given = true;
    if (const char *m = nonempty(env, "SLURM_MEM_PER_NODE"))
        a.mem_gib_per_node = parse_count("SLURM_MEM_PER_NODE", m) / 1024.0;
    else if (const char *mc = nonempty(env, "SLURM_MEM_PER_CPU"))
        a.mem_gib_per_node = parse_count("SLURM_MEM_PER_CPU", mc) / 1024.0 * a.cpus_per_node;
    else
        mem_given = false;
    if (const char *g = nonempty(env, "SLURM_GPUS_ON_NODE"))
        a.gpus_per_node = static_cast<int>(parse_count("SLURM_GPUS_ON_NODE", g));
    else if (const char *ids = nonempty(env, "SLURM_JOB_GPUS")) {
        int count = 1;
        for (const char *p = ids; *p; ++p)
            count += *p == ',';
        a.gpus_per_node = count;
    } else if (const char *gpn = nonempty(env, "SLURM_GPUS_PER_NODE"))
        a.gpus_per_node = static_cast<int>(parse_gres_count("SLURM_GPUS_PER_NODE", gpn));
    else
        gpus_given = cpus_on_node != nullptr;  // under slurmd, no GPU variable means no GPU
    // A task's number in the job: SLURM_PROCID under srun, else the MPI rank (mpirun inside
    // an allocation), so that one task charges the allocation.
    for (const char *name : {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
        if (const char *r = nonempty(env, name)) {
            a.procid = static_cast<int>(parse_count(name, r));
            break;
        }
    // A job step holds what srun gave it (srun --exact -c 1 --mem=1G in a larger job):
    // slurmd sets the step's CPUs and GPUs, but SLURM_MEM_PER_NODE is the job's.
    const char *step = nonempty(env, "SLURM_STEP_ID");
    if (a.procid == 0 && step && query) {
        const std::string text = query(a.job_id + "." + step);
        if (!text.empty()) {
            const JobTres t = parse_job_tres(text);
            if (t.has_mem) {
                a.mem_gib_per_node = t.mem_gib / std::max(1, t.nodes ? t.nodes : a.nodes);
                mem_given = true;
            }
        }
    }
    if (a.procid == 0 && (!mem_given || !gpus_given || a.cpus_per_node == 0) && query) {
        const std::string text = query(a.job_id);
        if (!text.empty()) {
            const JobTres t = parse_job_tres(text);
            const int nodes = std::max(1, t.nodes ? t.nodes : a.nodes);
            if (a.cpus_per_node == 0)
                a.cpus_per_node = t.cpus / nodes;
            if (!mem_given && t.has_mem)
                a.mem_gib_per_node = t.mem_gib / nodes;
            if (!gpus_given)
                a.gpus_per_node = t.gpus / nodes;
        }
    }
    return a;
}

}  // namespace hetpu::accounting
