// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/cluster.h"

#include <cstdlib>
#include <algorithm>
#include <set>
#include <utility>
#include <sstream>

namespace hetpu {

namespace {

bool positive_int(const char *s, int &out)
{
    if (!s || !*s)
        return false;
    char *end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (*end || v <= 0 || v > 1 << 24)
        return false;
    out = static_cast<int>(v);
    return true;
}

}  // namespace

MpiLaunch detect_mpi_launch(const std::function<const char *(const char *)> &lookup)
{
    MpiLaunch launch;
    // Size-carrying variables first, so the size is known whenever it can be.
    for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "PMIX_RANK"}) {
        const char *v = lookup(name);
        if (!v || !*v)
            continue;
        launch.launched = true;
        launch.variable = name;
        int size = 1;
        if (std::string(name) != "PMIX_RANK" && positive_int(v, size)) {
            launch.size = size;
            launch.size_known = true;
        }
        break;
    }
    for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK"})
        if (const char *v = lookup(name); v && *v)
            launch.pmi = true;
    return launch;
}

LaunchDecision decide_launch(const MpiLaunch &launch, bool built_with_mpi)
{
    if (!launch.launched)
        return {};
    // srun without a PMI plugin (--mpi=none, Slurm's default MpiDefault): MPI cannot start
    // in the step (OpenMPI aborts in MPI_Init). One task is a plain process; several would
    // each run the whole job alone: refuse with the fix.
    if (built_with_mpi && !launch.pmi) {
        if (launch.size_known && launch.size == 1)
            return {};
        return {LaunchMode::RefuseSeveral,
                "hetpu: srun started " + std::to_string(launch.size) + " tasks (" + launch.variable + "=" +
                    std::to_string(launch.size) +
                    ") without a PMI plugin, so MPI cannot join them into one job; launch with srun --mpi=pmix "
                    "(srun --mpi=list shows what this Slurm has)\n"};
    }
    if (built_with_mpi)
        return {LaunchMode::Mpi, ""};
    if (launch.size_known && launch.size == 1)
        return {};
    // Several copies each running the whole job alone would look like success: refuse.
    const std::string tasks = launch.size_known ? std::to_string(launch.size) + " tasks (" + launch.variable + "=" +
                                                      std::to_string(launch.size) + ")"
                                                : "an unknown number of tasks (" + launch.variable + " is set)";
    return {LaunchMode::RefuseSeveral,
            "hetpu was built without MPI support (configure --without-mpi) but was launched as " + tasks +
                "; run one task, or rebuild with StarPU-MPI\n"};
}

std::vector<PlannerWorker> planner_workers(const std::vector<ClusterPu> &pus)
{
    std::vector<PlannerWorker> out;
    for (size_t g = 0; g < pus.size(); ++g)
        out.push_back({static_cast<int>(g), pus[g].kind, "r" + std::to_string(pus[g].rank) + ":" + pus[g].name});
    return out;
}

unsigned distinct_hosts(const std::vector<ClusterPu> &pus)
{
    std::set<std::string> hosts;
    for (const auto &p : pus)
        hosts.insert(p.host);
    return static_cast<unsigned>(hosts.size());
}

std::string mismatch_message(const std::vector<std::string> &names, const char *what)
{
    bool same = true;
    for (const auto &n : names)
        same = same && n == names.front();
    if (same)
        return "";
    std::string msg = std::string("hetpu: the ranks ") + what + " different policies:";
    for (size_t r = 0; r < names.size(); ++r)
        msg += " rank " + std::to_string(r) + " '" + (names[r].empty() ? "(StarPU's default)" : names[r]) + "'";
    return msg + "; give every rank the same STARPU_SCHED (mpirun -x STARPU_SCHED=...)\n";
}

namespace {

std::vector<std::string> tokens_of(const std::string &sig)
{
    std::vector<std::string> out;
    std::istringstream in(sig);
    for (std::string t; in >> t;)
        out.push_back(t);
    return out;
}

bool is_data_token(const std::string &t) { return t.rfind("data:", 0) == 0; }

// A data token's file (percent-decoded) and fingerprint.
std::pair<std::string, std::string> data_parts(const std::string &t)
{
    const size_t eq = t.rfind('=');
    std::string file;
    const std::string raw = t.substr(5, eq == std::string::npos ? std::string::npos : eq - 5);
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '%' && i + 2 < raw.size()) {
            file += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            file += raw[i];
        }
    }
    return {file, eq == std::string::npos ? "" : t.substr(eq + 1)};
}

// "" when rank r's data tokens carry rank 0's fingerprints (their files may be named
// differently: each rank has its own copy), else the message naming the rank and the file.
std::string data_mismatch(const std::vector<std::string> &reference, const std::vector<std::string> &mine, size_t r,
                          const std::string &what)
{
    std::vector<std::string> ours, theirs;
    for (const std::string &t : reference)
        if (is_data_token(t))
            ours.push_back(t);
    for (const std::string &t : mine)
        if (is_data_token(t))
            theirs.push_back(t);
    for (size_t i = 0; i < std::max(ours.size(), theirs.size()); ++i) {
        const auto a = i < ours.size() ? data_parts(ours[i]) : std::make_pair(std::string("(no input file)"), "");
        const auto b = i < theirs.size() ? data_parts(theirs[i]) : std::make_pair(std::string("(no input file)"), "");
        if (a.second == b.second)
            continue;
        return "hetpu: " + what + ": rank " + std::to_string(r) + " read different data than rank 0: its '" + b.first +
               "' (fingerprint " + (b.second.empty() ? "-" : b.second) + ") is not rank 0's '" + a.first +
               "' (fingerprint " + (a.second.empty() ? "-" : a.second) + "); give every rank the same input\n";
    }
    return "";
}

}  // namespace

std::string job_mismatch_message(const std::vector<std::string> &signatures, const std::string &what)
{
    const auto options_of = [](const std::vector<std::string> &tokens) {
        std::vector<std::string> out;
        for (const std::string &t : tokens)
            if (!is_data_token(t))
                out.push_back(t);
        return out;
    };
    const std::vector<std::string> all_reference =
        signatures.empty() ? std::vector<std::string>{} : tokens_of(signatures[0]);
    const std::vector<std::string> reference = options_of(all_reference);
    for (size_t r = 1; r < signatures.size(); ++r) {
        if (signatures[r] == signatures[0])
            continue;
        const std::vector<std::string> all_mine = tokens_of(signatures[r]);
        const std::vector<std::string> mine = options_of(all_mine);
        size_t i = 0;
        while (i < mine.size() && i < reference.size() && mine[i] == reference[i])
            ++i;
        if (i < mine.size() || i < reference.size()) {
            const std::string theirs = i < mine.size() ? mine[i] : "(nothing)";
            const std::string ours = i < reference.size() ? reference[i] : "(nothing)";
            return "hetpu: " + what + ": rank " + std::to_string(r) + " runs a different job than rank 0: " + theirs +
                   " instead of " + ours + " (give every rank the same options)\n";
        }
        if (std::string data = data_mismatch(all_reference, all_mine, r, what); !data.empty())
            return data;
        // Same options, same data, different text (spacing, files named differently): the same job.
    }
    return "";
}

}  // namespace hetpu
