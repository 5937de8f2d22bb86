// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu_init_mpi() and the MPI state shared by the multi-rank divisible runner. Compiled
// in every build: without StarPU-MPI the process is rank 0 of 1 and hetpu_init_mpi()
// says how to get MPI support.
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/settings.h"
#include "runtime/mpi/core/cluster.h"
#include "runtime/mpi/mpi_state.h"
#include "runtime/start/starpu_start.h"

#ifdef HETPU_HAVE_MPI
#include <starpu_mpi.h>
#endif

namespace hetpu {

namespace {

struct MpiState {
    bool active = false;           // hetpu_init_mpi() succeeded and StarPU-MPI runs
    bool initialised_mpi = false;  // hetpu called MPI_Init_thread, so it finalises
    int rank = 0;
    int size = 1;
#ifdef HETPU_HAVE_MPI
    MPI_Comm control = MPI_COMM_NULL;
#endif
};

MpiState &mpi_state()
{
    static MpiState s;
    return s;
}

}  // namespace

int mpi_rank() { return mpi_state().active ? mpi_state().rank : 0; }
int mpi_size() { return mpi_state().active ? mpi_state().size : 1; }

std::vector<std::string> mpi_gather_to_root(const std::string &mine)
{
    if (mpi_size() <= 1)
        return {mine};
#ifdef HETPU_HAVE_MPI
    MPI_Comm comm = mpi_state().control;
    const int size = mpi_size(), rank = mpi_rank();
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
    int total = 0;
    for (int r = 0; r < size; ++r) {
        displs[r] = total;
        total += lens[r];
    }
    std::vector<char> all(rank == 0 ? static_cast<size_t>(total) + 1 : 1);
    MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);
    std::vector<std::string> out;
    if (rank == 0)
        for (int r = 0; r < size; ++r)
            out.emplace_back(all.data() + displs[r], static_cast<size_t>(lens[r]));
    return out;
#else
    return {mine};
#endif
}

std::string mpi_bcast_from_root(const std::string &value)
{
    if (mpi_size() <= 1)
        return value;
#ifdef HETPU_HAVE_MPI
    long long len = static_cast<long long>(value.size());
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, mpi_state().control);
    std::string out = mpi_rank() == 0 ? value : std::string(static_cast<size_t>(len), '\0');
    if (len > 0)
        MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, 0, mpi_state().control);
    return out;
#else
    return value;
#endif
}

long long mpi_min(long long value)
{
    if (mpi_size() <= 1)
        return value;
#ifdef HETPU_HAVE_MPI
    long long out = value;
    MPI_Allreduce(&value, &out, 1, MPI_LONG_LONG, MPI_MIN, mpi_state().control);
    return out;
#else
    return value;
#endif
}

int same_job_everywhere(const std::string &what, const std::string &signature)
{
    if (mpi_size() <= 1)
        return 0;
    // Rank 0 compares (one gather, not every rank holding every signature), then tells all.
    const std::vector<std::string> all = mpi_gather_to_root(signature);
    std::string why = mpi_rank() == 0 ? job_mismatch_message(all, what) : std::string();
    if (!why.empty())
        std::fputs(why.c_str(), stderr);
    const std::string verdict = mpi_bcast_from_root(why.empty() ? "same" : "different");
    return verdict == "same" ? 0 : -EINVAL;
}

#ifdef HETPU_HAVE_MPI

MPI_Comm mpi_control_comm() { return mpi_state().control; }

void mpi_stop_starpu_mpi()
{
    if (mpi_state().active)
        starpu_mpi_shutdown();  // leaves StarPU running: hetpu started it, not StarPU-MPI
}

void mpi_after_shutdown()
{
    MpiState &s = mpi_state();
    if (!s.active)
        return;
    s.active = false;
    if (s.control != MPI_COMM_NULL)
        MPI_Comm_free(&s.control);
    if (s.initialised_mpi)
        MPI_Finalize();
    s.initialised_mpi = false;
}

namespace {

// StarPU alone, started as starpu_mpi_init_conf() would start it (will_use_mpi, a core
// kept for StarPU-MPI's progress thread); StarPU-MPI itself starts only once every rank has
// StarPU running. Starting both in one call left the healthy ranks with StarPU-MPI running
// when another rank's StarPU failed: their starpu_mpi_shutdown() then waited forever in a
// barrier on MPI_COMM_WORLD that the failed rank never joins.
// STARPU_MPI_DRIVER_CALL_FREQUENCY > 0 (StarPU-MPI's progress run as a driver) is not
// supported: that mode has the application run the driver, which hetpu's runner does not.
int starpu_initialize_for_mpi(struct starpu_conf *conf, int *, char ***)
{
    const char *freq = process_env("STARPU_MPI_DRIVER_CALL_FREQUENCY");
    if ((!freq || std::atoi(freq) <= 0) && conf->ncpus == -1)
        conf->reserve_ncpus = conf->reserve_ncpus == -1 ? 1 : conf->reserve_ncpus + 1;
    conf->will_use_mpi = 1;
    return starpu_init(conf);
}

// One rank's start-up outcome, exchanged by every rank before StarPU-MPI starts.
struct StartStatus {
    int32_t rc;
    char host[64];
    char reason[192];
};

// Collective on the control communicator: every rank's status. Returns "" when every rank
// started, else the report: rank 0 lists every failed rank, another rank only its own.
std::string exchange_start_status(int rc, const std::string &reason)
{
    MpiState &s = mpi_state();
    StartStatus mine{};
    mine.rc = rc;
    std::snprintf(mine.host, sizeof mine.host, "%s", hetpu_host_name());
    std::snprintf(mine.reason, sizeof mine.reason, "%s", reason.c_str());
    std::vector<StartStatus> all(static_cast<size_t>(s.size));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, s.control);
    std::string report;
    int failed = 0;
    for (int r = 0; r < s.size; ++r) {
        const StartStatus &st = all[static_cast<size_t>(r)];
        if (st.rc == 0)
            continue;
        ++failed;
        if (s.rank == 0 || r == s.rank)
            report += "hetpu: rank " + std::to_string(r) + " (host " + st.host +
                      ") cannot start: " + (st.reason[0] ? st.reason : std::strerror(-st.rc)) + "\n";
    }
    if (failed > 0 && report.empty())
        report = " ";  // a failure elsewhere: rank 0 reports it
    return report;
}

// Every rank's string, gathered on every rank (names are cut to 63 characters).
std::vector<std::string> allgather_names(const std::string &mine, int size)
{
    char buf[64] = {};
    std::snprintf(buf, sizeof buf, "%s", mine.c_str());
    std::vector<char> all(static_cast<size_t>(size) * sizeof buf);
    MPI_Allgather(buf, sizeof buf, MPI_CHAR, all.data(), sizeof buf, MPI_CHAR, mpi_state().control);
    std::vector<std::string> out;
    for (int r = 0; r < size; ++r)
        out.emplace_back(all.data() + r * sizeof buf);
    return out;
}

void release_mpi()
{
    MpiState &s = mpi_state();
    if (s.control != MPI_COMM_NULL)
        MPI_Comm_free(&s.control);
    if (s.initialised_mpi)
        MPI_Finalize();
    s.initialised_mpi = false;
}

// refusal: null to start, else why this rank gives up (it only takes part in the checks).
int init_mpi(struct starpu_conf *conf, int *argc, char ***argv, const char *refusal)
{
    MpiState &s = mpi_state();
    if (hetpu_policy_name())
        return -EALREADY;
    int initialised = 0, provided = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            std::fprintf(stderr, "hetpu: MPI_Init_thread failed\n");
            return -EIO;
        }
        s.initialised_mpi = true;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        std::fprintf(stderr,
                     "hetpu: the MPI library gives thread level %d, hetpu needs MPI_THREAD_MULTIPLE (hetpu's "
                     "control messages and StarPU-MPI's progress thread both call MPI)\n",
                     provided);
        release_mpi();
        return -ENOTSUP;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    // A library loaded before MPI's that exports stub MPI functions (Ipopt's sequential
    // MUMPS does) makes every rank believe it is rank 0: catch it here, where the launcher's
    // own rank variable tells the truth, instead of deadlocking later.
    for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
        const char *v = process_env(var);
        if (v && *v) {
            if (std::atoi(v) != s.rank) {
                std::fprintf(stderr,
                             "hetpu: MPI says rank %d but %s=%s: MPI calls reach a stub MPI library loaded "
                             "before the real one (link the MPI library first)\n",
                             s.rank, var, v);
                std::abort();
            }
            break;
        }
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &s.control);

    // Same request everywhere, checked before StarPU starts so no rank runs a different
    // scheduler (or fails alone on an unknown name while the others wait for it).
    const std::string requested = requested_policy(conf).name;
    std::string why = mismatch_message(allgather_names(requested, s.size), "ask for");
    if (!why.empty()) {
        if (s.rank == 0)
            std::fputs(why.c_str(), stderr);
        release_mpi();
        return -EINVAL;
    }

    int rc = refusal
                 ? -ECANCELED
                 : start_starpu(conf, argc, argv, &starpu_initialize_for_mpi, HelpAction::Return, WhenRunning::Refuse);
    // STARPU_SCHED=help on every rank (the names matched above): the list is printed, no
    // StarPU runs anywhere.
    const bool help = rc == HETPU_INIT_HELP_SHOWN;
    // Every rank learns whether every rank started before any StarPU-MPI collective: one
    // failure (no worker, an invalid setting) fails them all with its reason, never a hang.
    const int status = help ? 0 : rc;
    const std::string failures = exchange_start_status(status, refusal       ? std::string(refusal)
                                                               : status != 0 ? last_start_failure()
                                                                             : std::string());
    if (!failures.empty() || help) {
        if (failures != " ")
            std::fputs(failures.c_str(), stderr);
        if (rc == 0) {
            abandon_run();
            starpu_shutdown();
            note_starpu_shutdown();
        }
        release_mpi();
        if (!failures.empty())
            return status != 0 ? status : -ECANCELED;
        return rc;
    }
    if ((rc = starpu_mpi_init_comm(argc, argv, 0, MPI_COMM_WORLD)) != 0) {
        // Rare (StarPU-MPI allocates its progress thread's state): the others may be waiting
        // in a collective already, so stop the whole job instead of hanging it.
        std::fprintf(stderr, "hetpu: rank %d: starting StarPU-MPI failed: %s\n", s.rank, std::strerror(-rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mark_started_by_hetpu_init();
    s.active = true;

    // The policy actually running (a conf->sched_policy struct is not a name above).
    const char *running = hetpu_policy_name();
    why = mismatch_message(allgather_names(running ? running : "", s.size), "run");
    if (!why.empty()) {
        if (s.rank == 0)
            std::fputs(why.c_str(), stderr);
        hetpu_shutdown();
        return -EINVAL;
    }
    return 0;
}

}  // namespace

#else  // !HETPU_HAVE_MPI

void mpi_stop_starpu_mpi() {}
void mpi_after_shutdown() {}

#endif

}  // namespace hetpu

namespace {

hetpu::LaunchDecision launch_decision()
{
    return hetpu::decide_launch(hetpu::detect_mpi_launch(hetpu::process_env), hetpu_mpi_available() != 0);
}

}  // namespace

// Nonzero when the program must call hetpu_init_mpi(): also when a build without MPI is
// launched as several tasks, so that hetpu_init_mpi() refuses it with the reason.
extern "C" int hetpu_mpi_launched(void) { return launch_decision().mode != hetpu::LaunchMode::Single ? 1 : 0; }

extern "C" int hetpu_mpi_available(void)
{
#ifdef HETPU_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

extern "C" int hetpu_mpi_rank(void) { return hetpu::mpi_rank(); }
extern "C" int hetpu_mpi_size(void) { return hetpu::mpi_size(); }

namespace {

// The application's own exchanges through hetpu_mpi_bcast and hetpu_mpi_gather, as if rank 0
// sent to and received from every rank directly (hetpu_mpi_app_bytes).
std::atomic<uint64_t> app_bytes_sent{0}, app_bytes_received{0};

}  // namespace

extern "C" void hetpu_mpi_app_bytes(uint64_t *sent, uint64_t *received)
{
    if (sent)
        *sent = app_bytes_sent.load();
    if (received)
        *received = app_bytes_received.load();
}

extern "C" int hetpu_mpi_bcast(void *buf, size_t bytes)
{
    if (hetpu::mpi_size() <= 1)
        return 0;
    if (!buf && bytes)
        return -EINVAL;
#ifdef HETPU_HAVE_MPI
    // MPI counts are ints: large buffers go in chunks.
    constexpr size_t chunk = size_t(1) << 30;
    for (size_t done = 0; done < bytes; done += chunk) {
        const int n = static_cast<int>(std::min(chunk, bytes - done));
        if (MPI_Bcast(static_cast<char *>(buf) + done, n, MPI_BYTE, 0, hetpu::mpi_control_comm()) != MPI_SUCCESS)
            return -EIO;
    }
    if (hetpu::mpi_rank() == 0)
        app_bytes_sent += bytes * static_cast<uint64_t>(hetpu::mpi_size() - 1);
    else
        app_bytes_received += bytes;
#endif
    return 0;
}

extern "C" int hetpu_mpi_gather(const void *mine, size_t bytes, void *all)
{
    if (hetpu::mpi_size() <= 1) {
        if (bytes && mine != all)
            std::memcpy(all, mine, bytes);
        return 0;
    }
    if ((!mine || (hetpu::mpi_rank() == 0 && !all)) && bytes)
        return -EINVAL;
#ifdef HETPU_HAVE_MPI
    if (bytes > static_cast<size_t>(std::numeric_limits<int>::max()))
        return -EFBIG;
    if (MPI_Gather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE, 0,
                   hetpu::mpi_control_comm()) != MPI_SUCCESS)
        return -EIO;
    if (hetpu::mpi_rank() == 0)
        app_bytes_received += bytes * static_cast<uint64_t>(hetpu::mpi_size() - 1);
    else
        app_bytes_sent += bytes;
#endif
    return 0;
}

extern "C" long long hetpu_mpi_min(long long value) { return hetpu::mpi_min(value); }

extern "C" int hetpu_mpi_same_job(const char *what, const char *signature)
{
    try {
        return hetpu::same_job_everywhere(what ? what : "hetpu", signature ? signature : "");
    } catch (const std::exception &e) {  // the API is C: report, never throw
        std::fprintf(stderr, "hetpu: %s while comparing the ranks' jobs\n", e.what());
        return -ENOMEM;
    }
}

extern "C" const char *hetpu_host_name(void)
{
    static char name[256];
    if (!name[0] && gethostname(name, sizeof name - 1) != 0)
        name[0] = '\0';
    return name;
}

extern "C" int hetpu_init_mpi(struct starpu_conf *conf, int *argc, char ***argv)
{
#ifdef HETPU_HAVE_MPI
    // srun without a PMI plugin: MPI_Init would abort; one task is a plain run.
    const hetpu::LaunchDecision launch = launch_decision();
    if (launch.mode == hetpu::LaunchMode::RefuseSeveral) {
        std::fputs(launch.message.c_str(), stderr);
        return -ENOSYS;
    }
    if (const hetpu::MpiLaunch l = hetpu::detect_mpi_launch(hetpu::process_env); l.launched && !l.pmi)
        return hetpu_init(conf);
    try {
        return hetpu::init_mpi(conf, argc, argv, nullptr);
    } catch (const std::exception &e) {  // the API is C: report, never throw
        std::fprintf(stderr, "hetpu: %s while starting StarPU-MPI\n", e.what());
        return -ENOMEM;
    }
#else
    (void)argc;
    (void)argv;
    const hetpu::LaunchDecision launch = launch_decision();
    if (launch.mode == hetpu::LaunchMode::RefuseSeveral) {
        std::fputs(launch.message.c_str(), stderr);
        return -ENOSYS;
    }
    // One task (or no launcher): a single process is rank 0 of 1, which is a plain run.
    return hetpu_init(conf);
#endif
}

extern "C" int hetpu_mpi_refuse_start(const char *reason, int *argc, char ***argv)
{
#ifdef HETPU_HAVE_MPI
    try {
        const int rc = hetpu::init_mpi(nullptr, argc, argv, reason && *reason ? reason : "it gave up");
        return rc == -EALREADY ? rc : -ECANCELED;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu: %s while refusing the start\n", e.what());
        return -ENOMEM;
    }
#else
    (void)reason;
    (void)argc;
    (void)argv;
    return 0;
#endif
}
