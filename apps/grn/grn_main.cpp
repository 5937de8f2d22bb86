// SPDX-License-Identifier: LGPL-2.1-or-later
// grn: gene regulatory network inference by exhaustive search, the candidate predictor
// subsets divided among the processing units by hetpu under the policy in STARPU_SCHED:
//   STARPU_SCHED=plb-hac grn --generate 200 --samples 80 --max-score 0.6 --verify
#include <hetpu/hetpu.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/app_record.h"
#include "apps/common/divisible_workers.h"
#include "apps/common/rank_reports.h"
#include "apps/common/result_digest.h"
#include "apps/common/run_output.h"
#include "apps/common/run_with_starpu.h"
#include "apps/grn/grn_codelets.h"
#include "apps/grn/grn_data.h"
#include "apps/grn/grn_job.h"
#include "apps/grn/grn_options.h"
#include "apps/grn/grn_search.h"

namespace {

using namespace hetpu::grn;
namespace apps = hetpu::apps;

struct Data {
    Expression expression;
    std::vector<Edge> planted;  // empty for --input
    bool generated = false;
};

// Returns 0, or 2 after printing the error (bad input).
int load(const Options &o, Data &data)
{
    std::string error;
    if (o.generate) {
        PlantedNetwork net = generate_network(o.generate, o.samples, o.regulators, o.noise, o.seed);
        data.expression = std::move(net.expression);
        data.planted = std::move(net.edges);
        data.generated = true;
        if (!o.write_data_path.empty() && !write_expression(o.write_data_path, data.expression, error)) {
            std::fprintf(stderr, "grn: %s\n", error.c_str());
            return 2;
        }
        if (!o.truth_path.empty() && !write_edges(o.truth_path, data.planted, data.expression.genes, error)) {
            std::fprintf(stderr, "grn: %s\n", error.c_str());
            return 2;
        }
        return 0;
    }
    // Every rank reads its own copy: the job check compares the files (fingerprints).
    if (!read_expression(o.input, data.expression, error) ||
        !check_sizes(o, data.expression.genes.size(), data.expression.samples, o.input, error) ||
        (hetpu_mpi_launched() != 0 && !apps::remember_input_fingerprint(o.input, error))) {
        std::fprintf(stderr, "grn: %s\n", error.c_str());
        return 2;
    }
    return 0;
}

int run_all(const Options &o, const Data &data)
{
    const Expression &e = data.expression;
    const uint32_t genes = static_cast<uint32_t>(e.genes.size());
    SearchInput in =
        make_search_input(discretise(e, o.threshold), genes, e.samples, static_cast<uint32_t>(o.lag), o.k, o.alpha);
    const apps::LosingCopiesEndFirst copies_end;  // they read the levels and entropies in `in`
    const uint64_t subsets = subset_count(genes, o.k);
    // On a multi-rank run (mpirun, srun) rank 0 gathers the results: it alone verifies and
    // reports; the other ranks only run blocks.
    const bool reporter = apps::reporting_rank();
    std::vector<Best> reference;
    if (o.verify && reporter)
        reference = reference_search(in);

    // Only the reporting rank writes the --json file.
    hetpu::apps::RunOutput output("grn", reporter ? o.json_path : std::string());
    if (!output.open())
        return 1;
    int status = 0;
    for (unsigned rep = 0; rep < o.reps && status == 0; ++rep) {
        SearchRun run;
        const apps::AppBytes exchanged = apps::app_bytes_now();
        if (int rc = run_search(in, o.block, run); rc != 0) {
            std::fprintf(stderr, "grn: repetition %u failed: %s\n", rep + 1, std::strerror(-rc));
            status = 1;
            break;
        }
        if (apps::add_app_bytes(run.mpi, exchanged) != 0) {
            status = 1;
            break;
        }
        if (!reporter)
            continue;
        apps::Verified verified = apps::Verified::NotChecked;
        if (o.verify) {
            uint32_t differ = 0, first = 0;
            for (uint32_t t = 0; t < genes; ++t)
                if (std::memcmp(&run.best[t].score, &reference[t].score, sizeof(double)) != 0 ||
                    run.best[t].rank != reference[t].rank)
                    if (differ++ == 0)
                        first = t;
            verified = differ ? apps::Verified::Failed : apps::Verified::Passed;
            if (differ) {
                std::fprintf(stderr,
                             "grn: verification FAILED: %u targets differ from the reference search; first %s: "
                             "score %.17g (subset %lld) vs %.17g (subset %lld)\n",
                             differ, e.genes[first].c_str(), run.best[first].score,
                             static_cast<long long>(run.best[first].rank), reference[first].score,
                             static_cast<long long>(reference[first].rank));
                status = 1;
            }
        }
        // Every target's raw best, bit for bit (a run with backup copies gives the same).
        apps::ResultDigest digest;
        digest.add(run.best.data(), run.best.size() * sizeof(run.best[0]));
        const std::string best_digest = digest.hex();
        // After the comparison with the reference, which keeps every target's raw best.
        const uint32_t constant = drop_constant_targets(run.best, in.hy);
        const std::vector<Edge> edges = edges_from_best(run.best, genes, o.k, o.max_score);
        const Recovery rec = compare_edges(edges, data.planted);

        apps::AppRecord r = apps::record_of("grn", run, rep, verified);
        const uint64_t evaluations = subsets * (genes - o.k);
        r.extra = {{"genes", genes},
                   {"samples", e.samples},
                   {"k", o.k},
                   {"lag", o.lag},
                   {"alpha", o.alpha},
                   {"threshold", o.threshold},
                   {"max_score", o.max_score},
                   {"subsets", subsets},
                   {"evaluations", evaluations},
                   {"evaluations_per_s", run.makespan_s > 0 ? evaluations / run.makespan_s : 0.0},
                   {"edges", edges.size()},
                   {"constant_targets", constant}};
        r.extra["digest"] = best_digest;
        if (data.generated) {
            r.extra["planted_edges"] = rec.planted;
            r.extra["true_positives"] = rec.true_positives;
            r.extra["edge_precision"] = rec.precision;
            r.extra["edge_recall"] = rec.recall;
        }
        std::printf("grn rep %u/%u: policy %s, %u genes x %u samples, k = %u, lag %d, %llu subsets, %s\n"
                    "  makespan %.6f s (%.3g subset-target evaluations/s), %zu edges at score <= %g\n",
                    rep + 1, o.reps, r.policy.c_str(), genes, e.samples, o.k, o.lag,
                    static_cast<unsigned long long>(subsets),
                    r.block ? ("fixed blocks of " + std::to_string(r.block) + " subsets").c_str()
                            : ("blocks chosen by " + r.planner).c_str(),
                    run.makespan_s, run.makespan_s > 0 ? evaluations / run.makespan_s : 0.0, edges.size(), o.max_score);
        if (constant)
            std::printf("  %u target genes never change level (nothing to predict): no edges for them\n", constant);
        if (data.generated)
            std::printf("  planted network: %llu edges, %llu recovered: precision %.3f, recall %.3f\n",
                        static_cast<unsigned long long>(rec.planted),
                        static_cast<unsigned long long>(rec.true_positives), rec.precision, rec.recall);
        if (o.verify)
            std::printf("  verified against the serial reference search: %s\n",
                        verified == apps::Verified::Passed ? "yes (identical scores)" : "NO");
        std::fputs(apps::worker_lines(r, "subsets").c_str(), stdout);
        output.add(hetpu::apps::json_line(r));
        if (rep + 1 == o.reps && !o.edges_path.empty()) {
            std::string error;
            if (!write_inferred(o.edges_path, run.best, e.genes, o.k, o.max_score, error)) {
                std::fprintf(stderr, "grn: %s\n", error.c_str());
                status = 1;
            }
        }
    }
    return output.finish(status);
}

}  // namespace

int main(int argc, char **argv)
{
    return apps::run_data_app("grn", argc, argv, parse_options, usage, load, codelets_init, codelets_shutdown, run_all);
}
