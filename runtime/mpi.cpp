// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu_init_mpi() and the MPI state shared by the multi-rank divisible runner. Compiled
// in every build: without StarPU-MPI the process is rank 0 of 1 and hetpu_init_mpi()
// says how to get MPI support.
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/settings.h"
#include "runtime/core/cluster.h"
#include "runtime/mpi_state.h"
#include "runtime/starpu_start.h"

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

#ifdef HETPU_HAVE_MPI

MPI_Comm mpi_control_comm() { return mpi_state().control; }

bool mpi_shutdown_starpu()
{
    if (!mpi_state().active)
        return false;
    starpu_mpi_shutdown();
    return true;
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

int starpu_mpi_initialize(struct starpu_conf *conf, int *argc, char ***argv)
{
    // initialize_mpi = 0: hetpu already initialised MPI with the thread level it needs.
    return starpu_mpi_init_conf(argc, argv, 0, MPI_COMM_WORLD, conf);
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

int init_mpi(struct starpu_conf *conf, int *argc, char ***argv)
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

    int rc = start_starpu(conf, argc, argv, &starpu_mpi_initialize, HelpAction::Return, WhenRunning::Refuse);
    // One rank failing (unknown name, no worker) must fail them all, not leave the others
    // waiting in the first collective of the job.
    int worst = rc < 0 ? rc : 0, global_worst = 0;
    MPI_Allreduce(&worst, &global_worst, 1, MPI_INT, MPI_MIN, s.control);
    if (rc != 0 || global_worst != 0) {
        if (rc == 0) {
            starpu_mpi_shutdown();  // stops StarPU too
            note_starpu_shutdown();
        }
        release_mpi();
        return rc != 0 ? rc : global_worst;
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

bool mpi_shutdown_starpu() { return false; }
void mpi_after_shutdown() {}

#endif

}  // namespace hetpu

extern "C" int hetpu_mpi_launched(void) { return hetpu::detect_mpi_launch(hetpu::process_env).launched ? 1 : 0; }

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
#endif
    return 0;
}

extern "C" long long hetpu_mpi_min(long long value) { return hetpu::mpi_min(value); }

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
    try {
        return hetpu::init_mpi(conf, argc, argv);
    } catch (const std::exception &e) {  // the API is C: report, never throw
        std::fprintf(stderr, "hetpu: %s while starting StarPU-MPI\n", e.what());
        return -ENOMEM;
    }
#else
    (void)conf;
    (void)argc;
    (void)argv;
    std::fprintf(stderr, "hetpu: started by an MPI launcher, but this hetpu was built without MPI: install "
                         "openmpi-bin libopenmpi-dev and reconfigure (the configure summary says 'MPI scale-out')\n");
    return -ENOSYS;
#endif
}
