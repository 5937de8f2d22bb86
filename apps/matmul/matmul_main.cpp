// SPDX-License-Identifier: LGPL-2.1-or-later
// matmul: C = A x B with the columns of B and C divided into blocks by hetpu. The policy
// comes from STARPU_SCHED, so comparing policies is one environment variable apart:
//   STARPU_SCHED=dmda matmul -n 4096 --verify --json results.jsonl
#include <hetpu/hetpu.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "apps/common/divisible_workers.h"
#include "apps/common/pinned_host_memory.h"
#include "apps/common/run_output.h"
#include "apps/common/run_with_starpu.h"
#include "apps/matmul/matmul_codelets.h"
#include "apps/matmul/matmul_job.h"
#include "apps/matmul/matmul_options.h"
#include "apps/matmul/matmul_problem.h"
#include "apps/matmul/matmul_report.h"

namespace {

using namespace hetpu::matmul;

// Returns the process exit status: 0, 1 (run failed or wrong result).
template <typename T> int run_all(const Options &options)
{
    // Every rank builds the same A and B from the seed (A is the shared input of every
    // block); on a multi-rank run only rank 0's C receives the results, so only rank 0
    // verifies and reports.
    Problem<T> problem(options.m, options.n, options.k, options.seed);
    // Page-locked while the process runs blocks: StarPU's copies to a GPU then overlap.
    const hetpu::apps::PinnedHostMemory pinned_a(problem.a.data(), problem.a.size() * sizeof(T));
    const hetpu::apps::PinnedHostMemory pinned_b(problem.b.data(), problem.b.size() * sizeof(T));
    const hetpu::apps::PinnedHostMemory pinned_c(problem.c.data(), problem.c.size() * sizeof(T));
    const bool reporter = hetpu::apps::reporting_rank();
    // Only the reporting rank writes the --json file.
    hetpu::apps::RunOutput output("matmul", reporter ? options.json_path : std::string());
    if (!output.open())
        return 1;
    int status = 0;
    for (unsigned rep = 0; rep < options.reps; ++rep) {
        if (rep > 0)
            problem.reset_c();
        struct hetpu_divisible_report report;
        int rc = run_once(problem, options, &report);
        if (rc != 0) {
            std::fprintf(stderr, "matmul: repetition %u failed: %s\n", rep + 1, std::strerror(-rc));
            status = 1;
            break;
        }
        hetpu::apps::Verified verified = hetpu::apps::Verified::NotChecked;
        if (options.verify && reporter) {
            VerifyResult v = verify(problem);
            verified = v.ok() ? hetpu::apps::Verified::Passed : hetpu::apps::Verified::Failed;
            if (!v.ok()) {
                std::fprintf(stderr,
                             "matmul: verification FAILED in repetition %u: %llu bad entries, first at row %llu "
                             "column %llu (value %g), worst error %.3g x tolerance\n",
                             rep + 1, static_cast<unsigned long long>(v.bad),
                             static_cast<unsigned long long>(v.first_bad_row),
                             static_cast<unsigned long long>(v.first_bad_col),
                             static_cast<double>(problem.c_at(v.first_bad_row, v.first_bad_col)), v.worst_tol_ratio);
                status = 1;
            }
        }
        if (!reporter)
            continue;
        hetpu::apps::AppRecord record = hetpu::apps::record_of("matmul", report, rep, verified);
        add_problem(record, options);
        std::fputs(summary(record, options, options.reps).c_str(), stdout);
        output.add(hetpu::apps::json_line(record));
    }
    if (output.close() != 0)
        status = 1;
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    Options options;
    if (std::optional<int> done = hetpu::apps::parse_or_exit("matmul", argc, argv, options, parse_options, usage))
        return *done;

    set_clblast_min_indirect(options.clblast_min_indirect);
    auto init = [] {
        codelets_init();
        return 0;
    };
    return hetpu::apps::run_with_starpu("matmul", init, codelets_shutdown, [&] {
        try {
            return options.precision == Precision::Single ? run_all<float>(options) : run_all<double>(options);
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "matmul: not enough memory for m = %llu, n = %llu, k = %llu: choose smaller sizes\n",
                         static_cast<unsigned long long>(options.m), static_cast<unsigned long long>(options.n),
                         static_cast<unsigned long long>(options.k));
            return 1;
        }
    });
}
