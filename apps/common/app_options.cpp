// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/common/app_options.h"

#include <set>
#include <sstream>

#include "common/cli_args.h"
#include "common/file_fingerprint.h"

namespace hetpu::apps {

const CLI::Validator
    NonEmpty([](std::string &value) { return value.empty() ? std::string("needs a non-empty value") : std::string(); },
             "", "non-empty");

CLI::Validator whole_in(uint64_t min, uint64_t max)
{
    const std::string range = std::to_string(min) + " - " + std::to_string(max);
    return CLI::Validator(
        [min, max, range](std::string &value) {
            uint64_t v = 0;
            return cli::parse_whole_number(value, v) && v >= min && v <= max
                       ? std::string()
                       : value + " is not a whole number in [" + range + "]";
        },
        "in [" + range + "]", "");
}

CLI::Validator finite_real(std::function<bool(double)> ok, const std::string &what)
{
    return CLI::Validator(
        [ok, what](std::string &value) {
            double v = 0;
            return cli::parse_real(value, v) && ok(v) ? std::string() : value + " is not " + what;
        },
        "REAL", "");
}

CLI::Validator real_in(double min, double max)
{
    std::ostringstream range;
    range << "a number between " << min << " and " << max;
    return finite_real([min, max](double v) { return v >= min && v <= max; }, range.str());
}

void add_run_options(CLI::App &app, RunOptions &o, const char *unit, uint64_t max_block, const char *verify_what)
{
    app.add_option("--block", o.block,
                   std::string(unit) +
                       " per block under fixed-block policies (default: chosen by the runtime; HETPU_BLOCK "
                       "overrides it)")
        ->type_name("B")
        ->check(whole_in(1, max_block));
    app.add_option("--reps", o.reps, "repetitions")->type_name("R")->capture_default_str()->check(whole_in(1, 1000000));
    app.add_flag("--verify", o.verify, std::string("check the result against ") + verify_what);
    app.add_option("--json", o.json_path, "append one JSON line per repetition to FILE")
        ->type_name("FILE")
        ->check(NonEmpty);
    app.add_option("--seed", o.seed, "seed of the pseudo-random input")
        ->type_name("S")
        ->capture_default_str()
        ->check(whole_in(0, UINT64_MAX));
}

std::string job_signature(const CLI::App &app)
{
    // Only rank 0 writes the JSON lines and the result files; checkpoints are per rank; each
    // rank may read its own copy of the input (the job check compares the files' fingerprints,
    // remember_input_fingerprint).
    static const std::set<std::string> per_rank = {"json",      "edges",       "write-data",   "truth",
                                                   "centroids", "assignments", "write-points", "checkpoint-dir",
                                                   "quiet",     "input"};
    std::string sig;
    for (const CLI::Option *opt : app.get_options()) {
        if (opt == app.get_help_ptr())
            continue;
        const std::string name = !opt->get_lnames().empty()   ? opt->get_lnames().front()
                                 : !opt->get_snames().empty() ? opt->get_snames().front()
                                                              : opt->get_name();
        if (per_rank.count(name))
            continue;
        std::string value;
        if (opt->count() > 0) {
            for (const std::string &r : opt->results())
                value += (value.empty() ? "" : ",") + r;
        } else {
            value = opt->get_default_str().empty() ? "(default)" : opt->get_default_str();
        }
        sig += (sig.empty() ? "" : " ") + name + "=" + value;
    }
    return sig;
}

namespace {
std::string g_job_signature;
}  // namespace

void remember_job_signature(const std::string &signature) { g_job_signature = signature; }
const std::string &remembered_job_signature() { return g_job_signature; }

bool remember_input_fingerprint(const std::string &path, std::string &error)
{
    uint64_t fingerprint = 0;
    if (!file_fingerprint(path, fingerprint, error))
        return false;
    g_job_signature += (g_job_signature.empty() ? "" : " ") + data_token(path, fingerprint);
    return true;
}

std::string program_name(const char *argv0, const char *fallback)
{
    std::string p = argv0 && *argv0 ? argv0 : fallback;
    if (size_t slash = p.rfind('/'); slash != std::string::npos)
        p.erase(0, slash + 1);
    if (p.rfind("lt-", 0) == 0)  // libtool's wrapper runs .libs/lt-<program>
        p.erase(0, 3);
    return p.empty() ? fallback : p;
}

bool parse_command_line(CLI::App &app, int argc, const char *const argv[], bool &help, std::string &error)
{
    try {
        cli::parse_or_throw(app, argc > 0 ? argc - 1 : 0, argv + (argc > 0 ? 1 : 0));
    } catch (const CLI::CallForHelp &) {
        help = true;
    } catch (const CLI::ParseError &e) {
        error = e.what();
        return false;
    }
    return true;
}

void add_checkpoint_options(CLI::App &app, uint32_t &every, std::string &dir, bool &restart, const char *every_help,
                            const char *restart_help)
{
    app.add_option("--checkpoint-every", every, every_help)->type_name("K")->check(whole_in(1, 1000000));
    app.add_option("--checkpoint-dir", dir, "directory of the checkpoints (created if missing)")
        ->type_name("DIR")
        ->check(NonEmpty);
    app.add_flag("--restart", restart, restart_help);
}

bool check_checkpoint_flags(uint64_t every, const std::string &dir, bool restart, std::string &error)
{
    const bool checkpointing = every > 0 || restart;
    if (checkpointing && dir.empty()) {
        error = std::string(restart ? "--restart" : "--checkpoint-every") +
                " needs --checkpoint-dir DIR: the directory the checkpoints are (to be) in";
        return false;
    }
    if (!checkpointing && !dir.empty()) {
        error = "--checkpoint-dir alone does nothing: add --checkpoint-every K to take checkpoints, or --restart";
        return false;
    }
    return true;
}

}  // namespace hetpu::apps
