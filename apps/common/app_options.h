// SPDX-License-Identifier: LGPL-2.1-or-later
// The command line every app shares: the options of a run (--block, --reps, --verify,
// --json, --seed), the parse into an options struct with CLI11's messages, and what main()
// does with the result. Pure C++, no StarPU: each app's parse is unit-tested.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace hetpu::apps {

struct RunOptions {
    uint64_t block = 0;  // elements per block under fixed-block policies; 0: the runtime's default
    unsigned reps = 1;
    bool verify = false;
    std::string json_path;  // empty: no JSON lines
    uint64_t seed = 42;
    bool help = false;  // -h/--help: print the usage, run nothing
};

// Adds --block (`unit`: what one element is, e.g. "columns"; at most `max_block`), --reps,
// --verify (`verify_what`: against what), --json and --seed.
void add_run_options(CLI::App &app, RunOptions &o, const char *unit, uint64_t max_block, const char *verify_what);

// Rejects an empty value (a file name given as "").
extern const CLI::Validator NonEmpty;

// Digits only (no sign: strtoull would wrap "-1" around), in [min, max].
CLI::Validator whole_in(uint64_t min, uint64_t max);

// A finite real number for which ok() holds, else "<value> is not <what>" (CLI::Range
// alone lets "nan" through).
CLI::Validator finite_real(std::function<bool(double)> ok, const std::string &what);
CLI::Validator real_in(double min, double max);  // finite, in [min, max]

// "hetpu-matmul" from argv[0] (a path, or libtool's lt-hetpu-matmul); `fallback` if empty.
std::string program_name(const char *argv0, const char *fallback);

// Parses argv[1..argc) into `app`'s options. Returns true (help set after -h/--help), or
// false with the message, which names the option: "-n: 0 is not a whole number in [1 - ...]".
bool parse_command_line(CLI::App &app, int argc, const char *const argv[], bool &help, std::string &error);

// grn's and kmeans's data: --input FILE or --generate N, not both; neither generates the
// default problem of `fallback` items.
template <typename Count>
bool choose_data(const std::string &input, Count &generate, Count fallback, std::string &error)
{
    if (!input.empty() && generate) {
        error = "both --input and --generate given: choose one";
        return false;
    }
    if (input.empty() && !generate)
        generate = fallback;
    return true;
}

// --checkpoint-every K (1 to 1,000,000), --checkpoint-dir DIR and --restart, with the app's own
// words for what a checkpoint and a restart are.
void add_checkpoint_options(CLI::App &app, uint32_t &every, std::string &dir, bool &restart, const char *every_help,
                            const char *restart_help);

// The checkpoint flags of an app that checkpoints (--checkpoint-every K, --checkpoint-dir DIR,
// --restart) agree: either needs the directory, and the directory alone does nothing.
bool check_checkpoint_flags(uint64_t every, const std::string &dir, bool restart, std::string &error);

// The job a parsed command line asks for, as hetpu_mpi_same_job() compares it across ranks:
// "name=value" for every option in the order the app declares them ("name=(default)" when
// not given and without a shown default), leaving out --help and the options that may differ
// per rank because only one rank uses them or each rank keeps its own (--json, the output
// files, --checkpoint-dir).
std::string job_signature(const CLI::App &app);

// The signature of the last successful parse_into() in this process: the apps' common
// start-up (run_with_starpu.h) compares it across ranks without each app passing it on.
void remember_job_signature(const std::string &signature);
const std::string &remembered_job_signature();
// Adds the fingerprint of an input file this rank reads itself to the remembered signature
// (a data token, common/file_fingerprint.h): ranks that read different bytes then stop
// together, rank 0 naming the rank and the file. False with `error` when it cannot be read.
bool remember_input_fingerprint(const std::string &path, std::string &error);

// What every app's parse_options() does: a fresh Options whose options describe() adds,
// CLI11 over argv, then (unless --help) complete() for the defaults that depend on other
// options and the checks across options. `out` is written only on success.
template <typename Options>
bool parse_into(void (*describe)(CLI::App &, Options &), bool (*complete)(Options &, std::string &), int argc,
                const char *const argv[], Options &out, std::string &error)
{
    Options o;
    CLI::App app;
    describe(app, o);
    if (!parse_command_line(app, argc, argv, o.help, error) || (!o.help && !complete(o, error)))
        return false;
    remember_job_signature(job_signature(app));
    out = o;
    return true;
}

// The --help text: describe()'s options and their defaults, under the program's name.
template <typename Options>
std::string help_text(void (*describe)(CLI::App &, Options &), const char *argv0, const char *fallback)
{
    Options defaults;
    CLI::App app{"", program_name(argv0, fallback)};
    describe(app, defaults);
    return app.help();
}

}  // namespace hetpu::apps
