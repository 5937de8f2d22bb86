// SPDX-License-Identifier: LGPL-2.1-or-later
// matmul: C = A x B with the columns of B and C divided into blocks by hetpu. The policy
// comes from STARPU_SCHED, so comparing policies is one environment variable apart:
//   STARPU_SCHED=dmda matmul -n 4096 --verify --json results.jsonl
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
#include "apps/common/rank_reports.h"
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
    // Every rank generates A (the shared input of every block); the columns of B and C
    // are held only where they are computed: the runner gives each rank its share, and
    // each rank verifies the columns it holds at the end.
    ColumnStore<T> store(options.m, options.n, options.k, options.seed);
    store.limit_bytes(options.max_columns_mib << 20);
    const hetpu::apps::PinnedHostMemory pinned_a(store.a.data(), store.a.size() * sizeof(T));
    const hetpu::apps::LosingCopiesEndFirst copies_end;  // they read A and B
    const bool reporter = hetpu::apps::reporting_rank();
    // Only the reporting rank writes the --json file.
    hetpu::apps::RunOutput output("matmul", reporter ? options.json_path : std::string());
    if (!output.open())
        return 1;
    int status = 0;
    for (unsigned rep = 0; rep < options.reps; ++rep) {
        const hetpu::apps::AppBytes exchanged = hetpu::apps::app_bytes_now();
        struct hetpu_divisible_report report;
        int rc = run_owned(store, options, &report);
        if (rc != 0) {
            std::fprintf(stderr, "matmul: repetition %u failed: %s\n", rep + 1, std::strerror(-rc));
            status = 1;
            break;
        }
        hetpu::apps::Verified verified = hetpu::apps::Verified::NotChecked;
        if (options.verify) {
            VerifyResult v = store.verify(report.share_offset, report.share_count);
            if (!v.ok()) {
                std::fprintf(stderr,
                             "matmul: verification FAILED in repetition %u%s: %llu bad entries, first at row %llu "
                             "column %llu, worst error %.3g x tolerance\n",
                             rep + 1,
                             hetpu_mpi_size() > 1 ? (" on rank " + std::to_string(hetpu_mpi_rank())).c_str() : "",
                             static_cast<unsigned long long>(v.bad), static_cast<unsigned long long>(v.first_bad_row),
                             static_cast<unsigned long long>(v.first_bad_col), v.worst_tol_ratio);
                status = 1;
            }
            // Every rank checked its own columns: the result is good when all are.
            const bool all_ok = hetpu_mpi_min(v.ok() ? 1 : 0) == 1;
            verified = all_ok ? hetpu::apps::Verified::Passed : hetpu::apps::Verified::Failed;
            if (!all_ok)
                status = 1;
        }
        hetpu::apps::JobTotals totals;
        hetpu::apps::add_job(totals, report);
        if (hetpu::apps::add_app_bytes(totals.mpi, exchanged) != 0)
            status = 1;
        if (!reporter)
            continue;
        hetpu::apps::AppRecord record = hetpu::apps::record_of("matmul", totals, rep, verified);
        add_problem(record, options);
        if (hetpu_mpi_size() == 1) {
            hetpu::apps::ResultDigest digest;  // C, bit for bit
            for (uint64_t j = 0; j < store.n; ++j)
                digest.add(store.c_col(j), store.m * sizeof(T));
            record.extra["digest"] = digest.hex();
        }
        output.add(summary(record, options, options.reps), hetpu::apps::json_line(record));
    }
    return output.finish(status);
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
