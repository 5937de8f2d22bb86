// SPDX-License-Identifier: LGPL-2.1-or-later
// The StarPU part of an app's main(): start hetpu (and StarPU), build the app's codelets,
// run, and always tear down in the reverse order, turning every failure into a message
// and an exit status. Header-only glue: the apps' pure cores never include it.
#pragma once

#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <string>

#include "apps/common/app_options.h"

namespace hetpu::apps {

// Starts hetpu as the launch asks: StarPU-MPI on every rank when an MPI launcher (mpirun,
// srun) started this process, plain StarPU otherwise (a single process is unchanged).
inline int start_hetpu()
{
    return hetpu_mpi_launched() ? hetpu_init_mpi(nullptr, nullptr, nullptr) : hetpu_init(nullptr);
}

// On a multi-rank run only rank 0 holds the results and writes reports.
inline bool reporting_rank() { return hetpu_mpi_rank() == 0; }

// A rank that stops before starting hetpu (its command line or its data is bad) would leave
// the other ranks of an MPI launch waiting for it: under a launcher it takes part in the
// start-up check instead, so that every rank stops with the reason and the rank's name.
inline void refuse_start_under_launcher(const std::string &reason)
{
    if (hetpu_mpi_launched())
        hetpu_mpi_refuse_start(reason.c_str(), nullptr, nullptr);
}

// main()'s first step. Returns the exit status when the program should stop: 2 after a bad
// command line (printed with a hint), 0 after --help (the usage printed); nothing otherwise.
template <typename Options>
std::optional<int> parse_or_exit(const char *app, int argc, char **argv, Options &options,
                                 bool (*parse)(int, const char *const[], Options &, std::string &),
                                 std::string (*usage)(const char *))
{
    std::string error;
    if (!parse(argc, argv, options, error)) {
        std::fprintf(stderr, "%s: %s\nRun with --help for the options.\n", app, error.c_str());
        refuse_start_under_launcher("invalid command line: " + error);
        return 2;
    }
    if (options.help) {
        std::fputs(usage(argc > 0 ? argv[0] : nullptr).c_str(), stdout);
        return 0;
    }
    return std::nullopt;
}

// How an app may start: on every rank of an MPI launch, or as one process only (an app whose
// data cannot be divided across nodes; it refuses a multi-rank launch itself).
enum class Launch { AnyRanks, SingleProcess };

// Returns the exit status: run()'s, 0 after STARPU_SCHED=help, 1 when StarPU or the
// codelets cannot start or memory runs out.
inline int run_with_starpu(const char *app, const std::function<int()> &codelets_init,
                           const std::function<void()> &codelets_shutdown, const std::function<int()> &run,
                           Launch launch = Launch::AnyRanks)
{
    int rc = launch == Launch::AnyRanks ? start_hetpu() : hetpu_init(nullptr);
    if (rc == HETPU_INIT_HELP_SHOWN)
        return 0;
    if (rc < 0) {
        // For an unknown STARPU_SCHED, hetpu has already listed the valid policies.
        // -ECANCELED: another rank could not start, and rank 0 said why; -ENOSYS: several
        // tasks of a build without MPI, which hetpu said too.
        if (rc != -ECANCELED && rc != -ENOSYS)
            std::fprintf(stderr, "%s: cannot start StarPU: %s\n", app, std::strerror(-rc));
        return 1;
    }
    // Ranks given different options would run different jobs (and fail deep inside
    // StarPU-MPI, or give a wrong result): every rank compares its parsed command line.
    if (hetpu_mpi_same_job(app, remembered_job_signature().c_str()) != 0) {
        hetpu_shutdown();
        return 1;
    }
    int status;
    if ((rc = codelets_init()) != 0) {
        std::fprintf(stderr, "%s: setting up the codelets failed: %s\n", app, std::strerror(-rc));
        status = 1;
    } else {
        try {
            status = run();
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "%s: out of memory\n", app);
            status = 1;
        }
    }
    hetpu_divisible_wait_copies();  // before the codelets go: a losing copy may still run one
    codelets_shutdown();
    hetpu_shutdown();
    return status;
}

// main() of an app that reads or generates its data before StarPU starts (grn, kmeans), so
// that bad input costs no start-up: parse the command line, load() (0, or the exit status
// after printing the problem), then run_all() under StarPU.
template <typename Options, typename Data>
int run_data_app(const char *app, int argc, char **argv,
                 bool (*parse)(int, const char *const[], Options &, std::string &), std::string (*usage)(const char *),
                 int (*load)(const Options &, Data &), int (*codelets_init)(), void (*codelets_shutdown)(),
                 int (*run_all)(const Options &, const Data &))
{
    Options options;
    if (std::optional<int> done = parse_or_exit(app, argc, argv, options, parse, usage))
        return *done;
    Data data;
    try {
        if (int rc = load(options, data); rc != 0) {
            refuse_start_under_launcher("its data could not be read or generated (its message says why)");
            return rc;
        }
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "%s: not enough memory for the data: use less\n", app);
        refuse_start_under_launcher("not enough memory for the data");
        return 1;
    }
    return run_with_starpu(app, codelets_init, codelets_shutdown, [&] { return run_all(options, data); });
}

}  // namespace hetpu::apps
