// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_options.h"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "apps/common/option_scanner.h"
#include "apps/matmul/matmul_options.h"  // parse_unsigned, shared by the apps

namespace hetpu::grn {

using hetpu::matmul::parse_unsigned;

std::string usage(const char *prog)
{
    std::string p = prog && *prog ? prog : "grn";
    if (size_t slash = p.rfind('/'); slash != std::string::npos)
        p.erase(0, slash + 1);
    if (p.rfind("lt-", 0) == 0)
        p.erase(0, 3);
    return "usage: " + p +
           " (--input FILE | --generate GENES) [options]\n"
           "Gene regulatory network inference by exhaustive search (Borelli et al. 2013): for\n"
           "every target gene, every predictor subset of k genes is scored by the mean\n"
           "conditional entropy of the target given the subset (unseen configurations\n"
           "penalised); the candidate subsets are divided among the processing units by hetpu.\n"
           "  --input FILE         expression table: one gene per row, its name then one value\n"
           "                       per sample (TSV/CSV/blanks, optional header, '#' comments)\n"
           "  --generate GENES     time series of a planted random ternary network instead\n"
           "  --samples S          samples of generated data (default 60)\n"
           "  --regulators R       planted regulators per gene (default k)\n"
           "  --noise P            probability that a generated level is random (default 0.05)\n"
           "  -k K                 predictors per subset, 1 to 3 (default 2)\n"
           "  --lag L              predictors at sample j explain the target at j + L (default 1\n"
           "                       for generated time series, 0 for --input)\n"
           "  --threshold T        levels: z-score below -T is 0, above T is 2, else 1 (default 0.43)\n"
           "  --alpha A            probability mass of each unseen configuration (default 1)\n"
           "  --max-score H        report targets whose best score is at most H (default 1: all)\n"
           "  --seed S             seed of the generator (default 42)\n"
           "  --block B            subsets per block under fixed-block policies (HETPU_BLOCK overrides)\n"
           "  --reps R             repetitions (default 1)\n"
           "  --verify             run the serial reference search too; scores must be identical\n"
           "  --edges FILE         write the inferred edges (TSV: regulator, target, score, predictors)\n"
           "  --write-data FILE    save the generated expression table (TSV)\n"
           "  --truth FILE         save the planted edges (TSV)\n"
           "  --json FILE          append one JSON line per repetition\n"
           "  -h, --help           show this help\n"
           "Example: STARPU_SCHED=plb-hac " +
           p + " --generate 200 --samples 80 --max-score 0.6 --verify\n";
}

namespace {

using Spec = apps::OptionSpec;

constexpr Spec kOptions[] = {
    {"--input", true},      {"--generate", true}, {"--samples", true},   {"--regulators", true}, {"--noise", true},
    {"-k", true},           {"--lag", true},      {"--threshold", true}, {"--alpha", true},      {"--max-score", true},
    {"--seed", true},       {"--block", true},    {"--reps", true},      {"--verify", false},    {"--edges", true},
    {"--write-data", true}, {"--truth", true},    {"--json", true},      {"-h", false},          {"--help", false},
};

bool parse_real(const char *text, const char *what, double min, double max, double &out, std::string &error)
{
    char *end = nullptr;
    double v = std::strtod(text, &end);
    if (!*text || *end || !std::isfinite(v) || v < min || v > max) {
        error = std::string(what) + " '" + text + "' is invalid: give a number between " + std::to_string(min) +
                " and " + std::to_string(max);
        return false;
    }
    out = v;
    return true;
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

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    Options o;
    auto handle = [&](const std::string &n, const char *value) {
        uint64_t v = 0;
        if (n == "-h" || n == "--help") {
            o.help = true;
        } else if (n == "--verify") {
            o.verify = true;
        } else if (n == "-k") {
            if (!parse_unsigned(value, "subset cardinality -k", 1, 3, v, error))
                return false;
            o.k = static_cast<uint32_t>(v);
        } else if (n == "--generate") {
            if (!parse_unsigned(value, "gene count --generate", 2, 100000, v, error))
                return false;
            o.generate = static_cast<uint32_t>(v);
        } else if (n == "--samples") {
            if (!parse_unsigned(value, "sample count --samples", 2, 1000000, v, error))
                return false;
            o.samples = static_cast<uint32_t>(v);
        } else if (n == "--regulators") {
            if (!parse_unsigned(value, "regulator count --regulators", 1, 3, v, error))
                return false;
            o.regulators = static_cast<uint32_t>(v);
        } else if (n == "--lag") {
            if (!parse_unsigned(value, "time lag --lag", 0, 1000, v, error))
                return false;
            o.lag = static_cast<int>(v);
        } else if (n == "--noise") {
            if (!parse_real(value, "noise --noise", 0, 1, o.noise, error))
                return false;
        } else if (n == "--threshold") {
            if (!parse_real(value, "threshold --threshold", 0, 10, o.threshold, error))
                return false;
        } else if (n == "--alpha") {
            if (!parse_real(value, "penalty --alpha", 0, 1e6, o.alpha, error))
                return false;
        } else if (n == "--max-score") {
            if (!parse_real(value, "score limit --max-score", 0, 1e6, o.max_score, error))
                return false;
        } else if (n == "--seed") {
            if (!parse_unsigned(value, "seed --seed", 0, UINT64_MAX, o.seed, error))
                return false;
        } else if (n == "--block") {
            if (!parse_unsigned(value, "block size --block", 1, UINT64_MAX, o.block, error))
                return false;
        } else if (n == "--reps") {
            if (!parse_unsigned(value, "repetition count --reps", 1, 1000000, v, error))
                return false;
            o.reps = static_cast<unsigned>(v);
        } else {
            if (!*value) {
                error = "option " + n + " needs a file name";
                return false;
            }
            if (n == "--input")
                o.input = value;
            if (n == "--edges")
                o.edges_path = value;
            if (n == "--write-data")
                o.write_data_path = value;
            if (n == "--truth")
                o.truth_path = value;
            if (n == "--json")
                o.json_path = value;
        }
        return true;
    };
    if (!apps::scan_options(argc, argv, kOptions, std::size(kOptions), "give the data with --input FILE", handle,
                            error))
        return false;
    if (o.help) {
        out = o;
        return true;
    }
    if (o.input.empty() == (o.generate == 0)) {
        error = o.input.empty() ? "no data: give --input FILE or --generate GENES"
                                : "both --input and --generate given: choose one";
        return false;
    }
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
    out = o;
    return true;
}

}  // namespace hetpu::grn
