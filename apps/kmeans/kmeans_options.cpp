// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_options.h"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "apps/common/option_scanner.h"
#include "apps/matmul/matmul_options.h"  // parse_unsigned, shared by the apps

namespace hetpu::kmeans {

using hetpu::matmul::parse_unsigned;

std::string usage(const char *prog)
{
    std::string p = prog && *prog ? prog : "kmeans";
    if (size_t slash = p.rfind('/'); slash != std::string::npos)
        p.erase(0, slash + 1);
    if (p.rfind("lt-", 0) == 0)
        p.erase(0, 3);
    return "usage: " + p +
           " -k K (--input FILE | --generate N) [options]\n"
           "Lloyd's k-means with k-means++ initialisation; each iteration's assignment step is\n"
           "one job divided among the processing units by hetpu (policy from STARPU_SCHED).\n"
           "  -k K                 number of clusters (1 <= K <= number of points)\n"
           "  --input FILE         points, one per line (CSV, TSV or blank separated, optional\n"
           "                       header, '#' comments), or hetpu's binary format (see README)\n"
           "  --generate N         N points in Gaussian blobs with known centres instead\n"
           "  --dims D             dimensions of generated points (default 2)\n"
           "  --blobs B            blobs of generated points (default K)\n"
           "  --sigma S            standard deviation of each blob (default 1; centres in [-50,50])\n"
           "  --max-iter I         most centroid updates (default 100)\n"
           "  --tol T              stop when centroids move less than T x mean variance (default 1e-6)\n"
           "  --seed S             seed of the generator and of k-means++ (default 42)\n"
           "  --block B            points per block under fixed-block policies (HETPU_BLOCK overrides)\n"
           "  --reps R             repetitions (default 1)\n"
           "  --verify             run the serial reference too and compare inertia and labels\n"
           "  --centroids FILE     write the centroids (CSV)\n"
           "  --assignments FILE   write the cluster of every point (one per line)\n"
           "  --write-points FILE  save the generated points (.bin: binary, otherwise CSV)\n"
           "  --truth FILE         save the generated blob centres (CSV)\n"
           "  --json FILE          append one JSON line per repetition\n"
           "  --checkpoint-every K save the iteration state every K iterations into --checkpoint-dir\n"
           "                       (asynchronous, through hetpu's checkpoint backend)\n"
           "  --checkpoint-dir DIR directory of the checkpoints (created if missing)\n"
           "  --restart            continue from the newest checkpoint in --checkpoint-dir (same\n"
           "                       -k, --seed and data; an error if there is none)\n"
           "  -h, --help           show this help\n"
           "Example: STARPU_SCHED=plb-hac " +
           p + " --generate 200000 --dims 4 -k 8 --verify\n";
}

namespace {

using Spec = apps::OptionSpec;

constexpr Spec kOptions[] = {
    {"-k", true},
    {"--input", true},
    {"--generate", true},
    {"--dims", true},
    {"--blobs", true},
    {"--sigma", true},
    {"--max-iter", true},
    {"--tol", true},
    {"--seed", true},
    {"--block", true},
    {"--reps", true},
    {"--verify", false},
    {"--centroids", true},
    {"--assignments", true},
    {"--write-points", true},
    {"--truth", true},
    {"--json", true},
    {"-h", false},
    {"--help", false},
    {"--checkpoint-every", true},
    {"--checkpoint-dir", true},
    {"--restart", false},
};

bool parse_positive_double(const char *text, const char *what, double &out, std::string &error)
{
    char *end = nullptr;
    double v = std::strtod(text, &end);
    if (!*text || *end || !std::isfinite(v) || v <= 0) {
        error = std::string(what) + " '" + text + "' is invalid: give a positive number such as 0.5";
        return false;
    }
    out = v;
    return true;
}

}  // namespace

bool check_size(uint64_t n, uint32_t d, const std::string &source, std::string &error)
{
    if (n * d > UINT32_MAX) {
        error = source + ": " + std::to_string(n) + " points x " + std::to_string(d) +
                " dimensions exceed the 4294967295 values StarPU 1.3 can hold in one buffer: use fewer points";
        return false;
    }
    return true;
}

bool check_k(uint32_t k, uint64_t n, const std::string &source, std::string &error)
{
    if (k > n) {
        error = "k = " + std::to_string(k) + " is larger than the " + std::to_string(n) + " points of " + source +
                ": give -k " + std::to_string(n) + " or fewer clusters";
        return false;
    }
    return true;
}

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error)
{
    Options o;
    bool have_k = false;
    auto handle = [&](const std::string &n, const char *value) {
        uint64_t v = 0;
        if (n == "-h" || n == "--help") {
            o.help = true;
        } else if (n == "--verify") {
            o.verify = true;
        } else if (n == "--restart") {
            o.restart = true;
        } else if (n == "--checkpoint-every") {
            if (!parse_unsigned(value, "checkpoint interval --checkpoint-every", 1, 1000000, v, error))
                return false;
            o.checkpoint_every = static_cast<uint32_t>(v);
        } else if (n == "-k") {
            if (!parse_unsigned(value, "cluster count -k", 1, 1u << 20, v, error))
                return false;
            o.k = static_cast<uint32_t>(v);
            have_k = true;
        } else if (n == "--input") {
            if (!*value) {
                error = "option --input needs a file name";
                return false;
            }
            o.input = value;
        } else if (n == "--generate") {
            if (!parse_unsigned(value, "point count --generate", 1, 1ull << 34, o.generate, error))
                return false;
        } else if (n == "--dims") {
            if (!parse_unsigned(value, "dimension count --dims", 1, 4096, v, error))
                return false;
            o.dims = static_cast<uint32_t>(v);
        } else if (n == "--blobs") {
            if (!parse_unsigned(value, "blob count --blobs", 1, 1u << 20, v, error))
                return false;
            o.blobs = static_cast<uint32_t>(v);
        } else if (n == "--sigma") {
            if (!parse_positive_double(value, "blob spread --sigma", o.sigma, error))
                return false;
        } else if (n == "--max-iter") {
            if (!parse_unsigned(value, "iteration limit --max-iter", 0, 1000000, v, error))
                return false;
            o.max_iter = static_cast<uint32_t>(v);
        } else if (n == "--tol") {
            char *end = nullptr;
            double t = std::strtod(value, &end);
            if (!*value || *end || !std::isfinite(t) || t < 0) {
                error = std::string("tolerance --tol '") + value + "' is invalid: give a number >= 0 such as 1e-6";
                return false;
            }
            o.tol = t;
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
            if (n == "--centroids")
                o.centroids_path = value;
            if (n == "--assignments")
                o.assignments_path = value;
            if (n == "--write-points")
                o.write_points_path = value;
            if (n == "--truth")
                o.truth_path = value;
            if (n == "--json")
                o.json_path = value;
            if (n == "--checkpoint-dir")
                o.checkpoint_dir = value;
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
    if (!have_k) {
        error = "missing -k: give the number of clusters, e.g. -k 8 (k = 0 is not allowed)";
        return false;
    }
    if (o.input.empty() == (o.generate == 0)) {
        error = o.input.empty() ? "no data: give --input FILE or --generate N"
                                : "both --input and --generate given: choose one";
        return false;
    }
    if (o.generate &&
        (!check_k(o.k, o.generate, "--generate", error) || !check_size(o.generate, o.dims, "--generate", error)))
        return false;
    if (!o.generate && (!o.write_points_path.empty() || !o.truth_path.empty())) {
        error = "--write-points and --truth describe generated data: use them with --generate";
        return false;
    }
    const bool checkpointing = o.checkpoint_every > 0 || o.restart;
    if (checkpointing && o.checkpoint_dir.empty()) {
        error = std::string(o.restart ? "--restart" : "--checkpoint-every") +
                " needs --checkpoint-dir DIR: the directory the checkpoints are (to be) in";
        return false;
    }
    if (!checkpointing && !o.checkpoint_dir.empty()) {
        error = "--checkpoint-dir alone does nothing: add --checkpoint-every K to take checkpoints, or --restart";
        return false;
    }
    // Versions are numbered by iteration: repetitions would take the same numbers again.
    if (checkpointing && o.reps > 1) {
        error = "--checkpoint-every and --restart work on a single run: drop --reps";
        return false;
    }
    if (o.blobs == 0)
        o.blobs = o.k;
    if (o.generate && o.blobs > o.generate) {
        error = "--blobs " + std::to_string(o.blobs) + " is larger than --generate " + std::to_string(o.generate) +
                ": give fewer blobs";
        return false;
    }
    out = o;
    return true;
}

}  // namespace hetpu::kmeans
