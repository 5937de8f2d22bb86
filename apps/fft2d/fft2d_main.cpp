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

#include "apps/common/divisible_workers.h"
#include "apps/common/pinned_host_memory.h"
#include "apps/common/result_digest.h"
#include "apps/common/run_output.h"
#include "apps/common/run_with_starpu.h"
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
    // Page-locked for the whole run (reset() copies into the same storage): StarPU's copies
    // of the rows to and from a GPU then overlap with its transforms.
    const hetpu::apps::PinnedHostMemory pinned_data(problem.data.data(), problem.data.size() * sizeof(Complex));
    const hetpu::apps::PinnedHostMemory pinned_scratch(problem.scratch.data(),
                                                       problem.scratch.size() * sizeof(Complex));
    hetpu::apps::RunOutput output("fft2d", options.json_path);
    if (!output.open())
        return 1;
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
        hetpu::apps::Verified verified = hetpu::apps::Verified::NotChecked;
        if (options.verify) {
            const VerifyResult v = verify(problem);
            verified = v.ok() ? hetpu::apps::Verified::Passed : hetpu::apps::Verified::Failed;
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
        hetpu::apps::AppRecord record = hetpu::apps::record_of("fft2d", report, rep, verified);
        add_problem(record, options);
        hetpu::apps::ResultDigest digest;  // the transform, bit for bit
        digest.add(problem.data.data(), problem.data.size() * sizeof(problem.data[0]));
        record.extra["digest"] = digest.hex();
        output.add(summary(record, options, options.reps), hetpu::apps::json_line(record));
    }
    return output.finish(status);
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
    if (hetpu_mpi_launched()) {
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
        else {
            // -ENOSYS: several tasks of a build without MPI, hetpu said so.
            if (launched_rc != -ENOSYS)
                std::fprintf(stderr, "fft2d: cannot start StarPU-MPI: %s\n", std::strerror(-launched_rc));
            return 1;
        }
    }
    return hetpu::apps::run_with_starpu(
        "fft2d",
        [&] {
            return codelets_init({options.n, options.m});
        },
        codelets_shutdown,
        [&] {
            try {
                return run_all(options);
            } catch (const std::bad_alloc &) {
                std::fprintf(stderr, "fft2d: not enough memory for %llu x %llu: choose smaller sizes\n",
                             static_cast<unsigned long long>(options.m), static_cast<unsigned long long>(options.n));
                return 1;
            }
        },
        hetpu::apps::Launch::SingleProcess);
}
