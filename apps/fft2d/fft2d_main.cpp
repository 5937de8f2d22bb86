// SPDX-License-Identifier: LGPL-2.1-or-later
// fft2d: forward 2D FFT of an M x N complex matrix, rows then columns divided into blocks
// by hetpu. The policy comes from STARPU_SCHED:
//   STARPU_SCHED=hepopta HETPU_TRADEOFF=energy fft2d -n 2048 --verify --json results.jsonl
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "apps/common/output_file.h"
#include "apps/fft2d/fft2d_codelets.h"
#include "apps/fft2d/fft2d_job.h"
#include "apps/fft2d/fft2d_options.h"
#include "apps/fft2d/fft2d_problem.h"
#include "apps/fft2d/fft2d_report.h"

namespace {

using namespace hetpu::fft2d;

int run_all(const Options &options)
{
    Problem problem(options.m, options.n, options.seed);
    std::FILE *json = nullptr;
    int json_error = 0;  // the first failed write: later lines are not attempted
    if (!options.json_path.empty()) {
        json = std::fopen(options.json_path.c_str(), "a");
        if (!json) {
            std::fprintf(stderr, "fft2d: cannot open --json file '%s': %s\n", options.json_path.c_str(),
                         std::strerror(errno));
            return 1;
        }
    }
    int status = 0;
    for (unsigned rep = 0; rep < options.reps; ++rep) {
        if (rep > 0)
            problem.reset();
        struct hetpu_divisible_report report;
        if (int rc = run_once(problem, options, &report); rc != 0) {
            std::fprintf(stderr, "fft2d: repetition %u failed: %s\n", rep + 1, std::strerror(-rc));
            status = 1;
            break;
        }
        Verified verified = Verified::NotChecked;
        if (options.verify) {
            const VerifyResult v = verify(problem);
            verified = v.ok() ? Verified::Passed : Verified::Failed;
            if (!v.ok()) {
                std::fprintf(stderr,
                             "fft2d: verification FAILED in repetition %u: %llu entries off by more than %.3g "
                             "(worst %.3g), first at row %llu column %llu\n",
                             rep + 1, static_cast<unsigned long long>(v.bad), v.tolerance, v.max_abs_error,
                             static_cast<unsigned long long>(v.first_bad / options.n),
                             static_cast<unsigned long long>(v.first_bad % options.n));
                status = 1;
            }
        }
        RunRecord record = make_record(report, options, rep, verified);
        std::fputs(summary(record, options.reps).c_str(), stdout);
        std::fflush(stdout);
        if (json && !json_error)
            json_error = hetpu::apps::append_line(json, json_line(record));
    }
    if (json && hetpu::apps::close_output(json, "fft2d", "--json file '" + options.json_path + "'", json_error))
        status = 1;
    if (hetpu::apps::close_output(stdout, "fft2d", "the standard output"))
        status = 1;
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    Options options;
    if (std::optional<int> done = hetpu::apps::parse_or_exit("fft2d", argc, argv, options, parse_options, usage))
        return *done;
    // fft2d's row passes are divisible, but its transpose needs every row on one rank: it
    // stays a single-node app. Launched on several ranks it says so instead of running N
    // independent copies.
    if (hetpu_mpi_launched() && hetpu_mpi_available()) {
        int launched_rc = hetpu_init_mpi(nullptr, &argc, &argv);
        if (launched_rc == 0 && hetpu_mpi_size() > 1) {
            if (hetpu_mpi_rank() == 0)
                std::fprintf(stderr, "fft2d: runs on one node only (its transpose needs every row on one rank): "
                                     "launch it as a single process, or with mpirun -np 1\n");
            hetpu_shutdown();
            return 2;
        }
        if (launched_rc == 0)
            hetpu_shutdown();  // one rank: run as a plain single process below
        else if (launched_rc != -ENOSYS) {
            std::fprintf(stderr, "fft2d: cannot start StarPU-MPI: %s\n", std::strerror(-launched_rc));
            return 1;
        }
    }
    int rc = hetpu_init(nullptr);
    if (rc == HETPU_INIT_HELP_SHOWN)
        return 0;
    if (rc < 0) {
        std::fprintf(stderr, "fft2d: cannot start StarPU: %s\n", std::strerror(-rc));
        return 1;
    }
    int status = 1;
    if (codelets_init({options.n, options.m}) == 0) {
        try {
            status = run_all(options);
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "fft2d: not enough memory for %llu x %llu: choose smaller sizes\n",
                         static_cast<unsigned long long>(options.m), static_cast<unsigned long long>(options.n));
            status = 1;
        }
    }
    codelets_shutdown();
    hetpu_shutdown();
    return status;
}
