// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_options.h"

namespace hetpu::grn {

namespace {

void describe(CLI::App &app, Options &o)
{
    app.description("Gene regulatory network inference by exhaustive search (Borelli et al. 2013): for every target "
                    "gene, every predictor subset of k genes is scored by the mean conditional entropy of the target "
                    "given the subset (unseen configurations penalised); the candidate subsets are divided among the "
                    "processing units by hetpu. Without --input it infers a generated network of " +
                    std::to_string(kDefaultGenes) + " genes.");
    app.add_option("--input", o.input,
                   "expression table: one gene per row, its name then one value per sample (TSV/CSV/blanks, "
                   "optional header, '#' comments)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--generate", o.generate,
                   "time series of a planted random ternary network of GENES genes (default " +
                       std::to_string(kDefaultGenes) + " without --input)")
        ->type_name("GENES")
        ->check(apps::whole_in(2, 100000));
    app.add_option("--samples", o.samples, "samples of generated data")
        ->type_name("S")
        ->capture_default_str()
        ->check(apps::whole_in(2, 1000000));
    app.add_option("--regulators", o.regulators, "planted regulators per gene (default k)")
        ->type_name("R")
        ->check(apps::whole_in(1, 3));
    app.add_option("--noise", o.noise, "probability that a generated level is random")
        ->type_name("P")
        ->capture_default_str()
        ->check(apps::real_in(0, 1));
    app.add_option("-k", o.k, "predictors per subset, 1 to 3")
        ->type_name("K")
        ->capture_default_str()
        ->check(apps::whole_in(1, 3));
    app.add_option("--lag", o.lag,
                   "predictors at sample j explain the target at j + L (default 1 for generated time series, 0 "
                   "for --input)")
        ->type_name("L")
        ->check(apps::whole_in(0, 1000));
    app.add_option("--threshold", o.threshold, "levels: z-score below -T is 0, above T is 2, else 1")
        ->type_name("T")
        ->capture_default_str()
        ->check(apps::real_in(0, 10));
    app.add_option("--alpha", o.alpha, "probability mass of each unseen configuration")
        ->type_name("A")
        ->capture_default_str()
        ->check(apps::real_in(0, 1e6));
    app.add_option("--max-score", o.max_score, "report targets whose best score is at most H (1: all)")
        ->type_name("H")
        ->capture_default_str()
        ->check(apps::real_in(0, 1e6));
    apps::add_run_options(app, o, "subsets", UINT64_MAX, "the serial reference search (scores must be identical)");
    app.add_option("--edges", o.edges_path, "write the inferred edges (TSV: regulator, target, score, predictors)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--write-data", o.write_data_path, "save the generated expression table (TSV)")
        ->type_name("FILE")
        ->check(apps::NonEmpty);
    app.add_option("--truth", o.truth_path, "save the planted edges (TSV)")->type_name("FILE")->check(apps::NonEmpty);
    app.footer("Example: STARPU_SCHED=plb-hac hetpu-grn --generate 200 --samples 80 --max-score 0.6 --verify");
}

}  // namespace

bool check_sizes(const Options &o, uint64_t genes, uint64_t samples, const std::string &source, std::string &error)
{
    if (genes < o.k + 1ull) {
        error = source + " has " + std::to_string(genes) + " genes: subsets of k = " + std::to_string(o.k) +
                " predictors need at least " + std::to_string(o.k + 1) + " genes (give more genes or a smaller -k)";
        return false;
    }
    if (genes > 100000) {
        error = source + " has " + std::to_string(genes) + " genes: at most 100000 are supported";
        return false;
    }
    if (genes * samples > UINT32_MAX) {
        error = source + ": " + std::to_string(genes) + " genes x " + std::to_string(samples) +
                " samples exceed the 4294967295 values StarPU 1.3 can hold in one buffer: use fewer";
        return false;
    }
    const uint64_t lag = o.lag < 0 ? 0 : static_cast<uint64_t>(o.lag);
    if (samples < lag + 2) {
        error = source + " has " + std::to_string(samples) + " samples: with --lag " + std::to_string(lag) +
                " at least " + std::to_string(lag + 2) + " are needed";
        return false;
    }
    return true;
}

namespace {

// Defaults that depend on other options, and the checks across options.
bool complete(Options &o, std::string &error)
{
    if (!apps::choose_data(o.input, o.generate, kDefaultGenes, error))
        return false;
    if (!o.generate && (!o.write_data_path.empty() || !o.truth_path.empty())) {
        error = "--write-data and --truth describe generated data: use them with --generate";
        return false;
    }
    if (o.regulators == 0)
        o.regulators = o.k;
    if (o.lag < 0)
        o.lag = o.generate ? 1 : 0;
    if (o.generate && !check_sizes(o, o.generate, o.samples, "--generate", error))
        return false;
    return true;
}

}  // namespace

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    return apps::parse_into(describe, complete, argc, argv, out, error);
}

std::string usage(const char *prog) { return apps::help_text(describe, prog, "hetpu-grn"); }

}  // namespace hetpu::grn
