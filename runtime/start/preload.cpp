// SPDX-License-Identifier: LGPL-2.1-or-later
// libhetpu-preload.so: puts an unmodified StarPU program under a hetpu policy.
//
//   LD_PRELOAD=libhetpu-preload.so STARPU_SCHED=greedy ./any_starpu_program
//
// The program's calls to starpu_init()/starpu_initialize() land here first; hetpu
// resolves STARPU_SCHED (its own policies and StarPU's) and then calls the real
// starpu_initialize with the resolved policy. StarPU's starpu_init() itself calls
// starpu_initialize() through the PLT, i.e. back into this file: the reentrancy guard
// forwards such nested calls untouched.
#include <dlfcn.h>
#include <hetpu/hetpu.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/mpi/core/cluster.h"
#include "runtime/mpi/mpi_state.h"
#include "runtime/start/starpu_start.h"

#ifdef HETPU_HAVE_MPI
#include <starpu_mpi.h>
#endif

namespace {

template <typename Fn> Fn real_symbol(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        std::fprintf(stderr, "hetpu-preload: cannot find StarPU's %s (%s); is the program linked against StarPU?\n",
                     name, dlerror());
        std::abort();
    }
    return reinterpret_cast<Fn>(sym);
}

int real_starpu_initialize(struct starpu_conf *conf, int *argc, char ***argv)
{
    using Fn = int (*)(struct starpu_conf *, int *, char ***);
    static Fn fn = real_symbol<Fn>("starpu_initialize");
    return fn(conf, argc, argv);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int starpu_initialize(struct starpu_conf *conf, int *argc,
                                                                        char ***argv)
{
    if (hetpu::inside_start_starpu())
        return real_starpu_initialize(conf, argc, argv);
    try {
        return hetpu::start_starpu(conf, argc, argv, &real_starpu_initialize, hetpu::HelpAction::Exit,
                                   hetpu::WhenRunning::Forward);
    } catch (const std::exception &e) {  // never unwind into a C program
        std::fprintf(stderr, "hetpu-preload: %s while starting StarPU\n", e.what());
        return -ENOMEM;
    }
}

extern "C" __attribute__((visibility("default"))) int starpu_init(struct starpu_conf *conf)
{
    return starpu_initialize(conf, nullptr, nullptr);
}

#ifdef HETPU_HAVE_MPI
namespace {

// An unmodified StarPU-MPI program resolves its policy on each rank separately (above).
// Once StarPU-MPI runs, rank 0 gathers every rank's policy name through StarPU-MPI itself
// (the program chose MPI's thread level, so hetpu makes no MPI call of its own) and stops
// the whole job, naming each rank's policy, when they differ.
void check_same_policy(MPI_Comm comm)
{
    int rank = 0, size = 1;
    starpu_mpi_comm_rank(comm, &rank);
    starpu_mpi_comm_size(comm, &size);
    const char *mine = hetpu_policy_name();
    if (size <= 1 || !mine)
        return;  // hetpu_init_mpi() is starting StarPU: it checks the policies itself
    constexpr size_t kLen = 64;
    constexpr int64_t kTagBase = 0x4845545055000000LL;  // "HETPU": clear of the program's tags
    std::vector<char> names(static_cast<size_t>(size) * kLen, '\0');
    std::snprintf(&names[static_cast<size_t>(rank) * kLen], kLen, "%s", mine);
    std::vector<starpu_data_handle_t> handles(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) {
        // Every rank registers every rank's name; only the owner's has a buffer here.
        const bool own = r == rank || rank == 0;
        starpu_variable_data_register(&handles[r], own ? STARPU_MAIN_RAM : -1,
                                      own ? reinterpret_cast<uintptr_t>(&names[static_cast<size_t>(r) * kLen]) : 0,
                                      kLen);
        starpu_mpi_data_register_comm(handles[r], kTagBase + r, r, comm);
    }
    starpu_mpi_gather_detached(handles.data(), size, 0, comm, nullptr, nullptr, nullptr, nullptr);
    for (int r = 0; r < size; ++r)
        starpu_data_unregister(handles[r]);  // waits for the transfers; rank 0's copies land in names
    if (rank != 0)
        return;
    std::vector<std::string> running;
    for (int r = 0; r < size; ++r)
        running.emplace_back(&names[static_cast<size_t>(r) * kLen]);
    if (const std::string why = hetpu::mismatch_message(running, "run"); !why.empty()) {
        std::fputs(why.c_str(), stderr);
        MPI_Abort(comm, 1);
    }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int starpu_mpi_init_conf(int *argc, char ***argv, int initialize_mpi,
                                                                           MPI_Comm comm, struct starpu_conf *conf)
{
    using Fn = int (*)(int *, char ***, int, MPI_Comm, struct starpu_conf *);
    static Fn fn = real_symbol<Fn>("starpu_mpi_init_conf");
    const int rc = fn(argc, argv, initialize_mpi, comm, conf);  // its starpu_init lands above
    if (rc == 0) {
        try {
            check_same_policy(comm);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "hetpu-preload: %s while comparing the ranks' policies\n", e.what());
        }
    }
    return rc;
}
#endif

extern "C" __attribute__((visibility("default"))) void starpu_shutdown(void)
{
    using Fn = void (*)(void);
    static Fn fn = real_symbol<Fn>("starpu_shutdown");
    fn();
    hetpu::note_starpu_shutdown();
}
