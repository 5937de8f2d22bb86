// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/settings.h"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <strings.h>

#include "common/finite_number.h"

namespace hetpu {

const char *process_env(const char *name) { return std::getenv(name); }

namespace {

bool zero_or_at_least_one(double v) { return v == 0 || v >= 1; }

constexpr double kNoLimit = 1e18;

using T = SettingType;

// The declarations. A new setting goes here (and nowhere else): the README's table, the
// start-up check and `hetpu settings` follow from this list.
const std::vector<SettingSpec> kSpecs = {
    // Start-up and divisible jobs
    {"HETPU_VERBOSE", T::Flag, "`0`", "`1`: print the policy and workers at start-up", 0, 0, nullptr, "1"},
    {"HETPU_HOME", T::Path, "`$XDG_DATA_HOME/hetpu` or `~/.local/share/hetpu`",
     "profiles, fronts, PLB-HAC models and the ledger", 0, 0, nullptr, "/scratch/me/hetpu"},
    {"HETPU_BLOCK", T::Whole, "job's", "fixed block size (elements) under policies without a planner", 1, kNoLimit,
     nullptr, "256"},
    {"HETPU_TRACE", T::Path, "off",
     "file: one JSON line per planned block (time, unit, size, predicted and measured duration, phase, step, "
     "`latency_s` and `home_delay_s`: what plb-hac prices the unit's blocks at beyond its models; `exec_s`, "
     "`transfer_s`, `unseen_s`: the measured duration split into what StarPU's profiling saw and the rest)",
     0, 0, nullptr, "trace.jsonl"},
    {"HETPU_MPI_PLANNER", T::Choice, "`per-node` with a placement, else `central`",
     "multi-rank jobs: `per-node` (each rank plans its share of data it owns; rank 0 only re-shares) or `central` "
     "(one planner on rank 0, data relayed through it)",
     0, 0, "per-node|central", "central"},
    {"HETPU_MPI_LINK_PROBE", T::Flag, "`1`",
     "`1`: a per-node multi-rank job first measures each node's link against its neighbours (a few tenths of a "
     "second) and prices moves by the links they cross; `0`: every link is taken as 10 GB/s and 50 us",
     0, 0, nullptr, "0"},
    {"HETPU_MPI_LIVENESS_S", T::Number, "10x the longest block, at least `60`",
     "multi-rank jobs: seconds a rank may show no progress before the job ends on every rank, rank 0 naming it "
     "(`0`: the default)",
     0, 1e9, nullptr, "120"},
    {"HETPU_BACKUP_ALL", T::Flag, "`0`",
     "`1` (tests): one backup copy of every block of a divisible job on another worker", 0, 0, nullptr, "1"},
    // PLB-HAC
    {"HETPU_PLBHAC_LADDER", T::Flag, "`1`",
     "`1`: plan by revocable promises and withdrawable hand-outs, learning a job with no models by a ladder of "
     "probes and seeding it from models where there are; `0`: the paper's planner (a training phase of `x_init` "
     "blocks, virtual steps)",
     0, 0, nullptr, "0"},
    {"HETPU_PLBHAC_XINIT", T::Whole, "automatic", "PLB-HAC's training block (elements; `0`: automatic)", 0, kNoLimit,
     nullptr, "1024"},
    {"HETPU_PLBHAC_STEPS", T::Whole, "`8`", "virtual steps of a run that trains its models", 1, 1e6, nullptr, "8"},
    {"HETPU_PLBHAC_WARM_STEPS", T::Whole, "`8`",
     "virtual steps of a run that starts from saved models (`HETPU_PLBHAC_LADDER=0`)", 1, 1e6, nullptr, "4"},
    {"HETPU_PLBHAC_MIN_STEP_MS", T::Number, "`200`", "shortest virtual step (ms); fewer steps for short jobs", 0, 1e9,
     nullptr, "200"},
    {"HETPU_PLBHAC_STEP_ERROR", T::Number, "`0.1`",
     "fewer, larger steps when accelerators pay a fixed cost per block (`0`: off)", 0, 1e3, nullptr, "0.1"},
    {"HETPU_PLBHAC_MIN_STEPS", T::Whole, "`4`",
     "fewest steps left the fixed-cost rule may choose, unless that many blocks' fixed costs would take over a "
     "quarter of the time left",
     1, 1e6, nullptr, "4"},
    {"HETPU_PLBHAC_GAP_MS", T::Number, "`400`", "gap-filling threshold (ms)", 0, 1e9, nullptr, "400"},
    {"HETPU_PLBHAC_TAIL", T::Number, "`0.7`", "fraction of the job after which blocks shrink", 0, 1, nullptr, "0.7"},
    {"HETPU_PLBHAC_ALPHA", T::Number, "`0.1`", "shrink per step in the tail", 0, 0.99, nullptr, "0.1"},
    {"HETPU_PLBHAC_ALIGN", T::Flag, "`1`", "`1`: equalise absolute finish times; `0`: equal block durations", 0, 0,
     nullptr, "1"},
    {"HETPU_PLBHAC_HEDGE", T::Flag, "`1`",
     "`1`: the last solve weighs each unit's share against the measured spread of its kind's misses; `0`: its shares "
     "end together as predicted",
     0, 0, nullptr, "1"},
    {"HETPU_PLBHAC_SOLVER", T::Choice, "`auto`",
     "who solves each step: `auto` the equal-finish search where every fitted curve increases (exact there), Ipopt "
     "elsewhere; `ipopt` Ipopt always, as the paper",
     0, 0, "auto|ipopt", "auto"},
    {"HETPU_PLBHAC_TRUST", T::Number, "`4`",
     "no block beyond this many times the largest one a unit has run, squared while its time has hardly grown with "
     "its size (`0`: no cap)",
     0, 1e9, nullptr, "4", zero_or_at_least_one, "0 (no cap) or a factor >= 1"},
    {"HETPU_PLBHAC_MODELS", T::Flag, "`on`", "`off`: neither read nor save models in `$HETPU_HOME/plbhac-models`", 0, 0,
     nullptr, "off"},
    {"HETPU_PLBHAC_STARPU_MODELS", T::Flag, "`on`",
     "`off`: a job with no plb-hac models does not start from StarPU's calibrated model of its codelet", 0, 0, nullptr,
     "off"},
    {"HETPU_PLBHAC_KEEP_MODELS", T::Flag, "`1`",
     "`0`: within one process, do not reuse the models of earlier jobs of the same name", 0, 0, nullptr, "0"},
    // HDSS
    {"HETPU_HDSS_XINIT", T::Whole, "automatic", "HDSS's first block (elements; `0`: automatic)", 0, kNoLimit, nullptr,
     "1024"},
    // HEPOPTA / HTPOPTA
    {"HETPU_TRADEOFF", T::Text, "`slowdown<=5%`", "hepopta/htpopta: `time`, `energy` or `slowdown<=X%`", 0, 0, nullptr,
     "slowdown<=5%"},
    {"HETPU_BASE_POWER", T::Number, "profile's", "htpopta: static power P_S in watts", 0, 1e9, nullptr, "45"},
    {"HETPU_FRONT_CACHE", T::Flag, "`1`", "`0`: always recompute the Pareto front", 0, 0, nullptr, "0"},
    // Energy
    {"HETPU_ENERGY", T::Choice, "`auto`", "energy source: `rapl`, `nvml`, `model` or `auto`", 0, 0,
     "auto|rapl|nvml|model", "model"},
    {"HETPU_POWERCAP_ROOT", T::Path, "`/sys/class/powercap`", "where RAPL counters are read", 0, 0, nullptr,
     "/sys/class/powercap"},
    {"HETPU_NVML_LIBRARY", T::Path, "`libnvidia-ml.so.1`", "the NVML library to load", 0, 0, nullptr,
     "libnvidia-ml.so.1"},
    // MGB
    {"HETPU_MGB_ARBITER", T::Text, "`/hetpu-mgb-<uid>`",
     "node-wide shared-memory segment; `off`: reservations stay in the process", 0, 0, nullptr, "/hetpu-mgb-jobs"},
    {"HETPU_MGB_TRACE", T::Path, "off", "file: one JSON line per grant and release (several processes may share it)", 0,
     0, nullptr, "mgb.jsonl"},
    {"HETPU_MGB_AGING", T::Whole, "`16`",
     "bypasses after which the oldest waiting task blocks backfilling (`0`: "
     "strict FIFO)",
     0, 1e6, nullptr, "16"},
    {"HETPU_MGB_POLL_MS", T::Whole, "`10`", "how often (ms) a process with waiting tasks looks at what others freed", 1,
     1e6, nullptr, "10"},
    {"HETPU_MGB_COLOCATION", T::Choice, "`auto`",
     "how a shared device runs kernels of several processes: `mps` at once, `time-sliced` by turns (mgb then shares a "
     "device only to fill idle gaps); `auto`: MPS when its control daemon runs (CUDA), else time-sliced",
     0, 0, "auto|mps|time-sliced", "time-sliced"},
    {"HETPU_CG_RATIO", T::Whole, "`2`", "`cg`: tasks per device", 1, 1e6, nullptr, "2"},
    // Accounting
    {"HETPU_ACCOUNTING", T::Flag, "`1`", "`0`: no charge, no ledger row", 0, 0, nullptr, "0"},
    {"HETPU_ACCOUNTING_QUIET", T::Flag, "`0`", "`1`: no summary on stderr", 0, 0, nullptr, "1"},
    {"HETPU_LEDGER", T::Path, "`$HETPU_HOME/ledger.sqlite`", "the ledger", 0, 0, nullptr, "ledger.sqlite"},
    {"HETPU_PARTITION_CONFIG", T::Path, "none (hwloc detection)", "TOML description of the site's partitions", 0, 0,
     nullptr, "site.toml"},
    {"HETPU_PARTITION", T::Text, "`$SLURM_JOB_PARTITION`", "which partition of the config this run is charged in", 0, 0,
     nullptr, "gpu"},
    {"HETPU_GRID_GCO2E_PER_KWH", T::Number, "none", "carbon intensity, for a gCO2e estimate", 0, 1e9, nullptr, "250"},
    {"HETPU_ACCOUNTING_GPU_SHARE", T::Choice, "`use` under the node-wide MGB arbiter, else `allocation`",
     "GPU fraction charged: `use` (share-time of shared devices) or `allocation` (whole devices held)", 0, 0,
     "use|allocation", "allocation"},
    {"HETPU_ACCOUNTING_OPENCL_AS_GPU", T::Flag, "`0`",
     "`1`: OpenCL devices on CPUs (PoCL) count as GPUs for the GPU fraction and energy (tests)", 0, 0, nullptr, "1"},
};

const char *type_name(SettingType t)
{
    switch (t) {
    case T::Flag: return "flag";
    case T::Whole: return "whole number";
    case T::Number: return "number";
    case T::Choice: return "choice";
    case T::Text: return "text";
    case T::Path: return "path";
    }
    return "?";
}

// What a setting accepts, in words, for error messages and `hetpu settings`.
std::string accepted(const SettingSpec &s)
{
    std::ostringstream o;
    switch (s.type) {
    case T::Flag: o << "1 or 0 (also on/off, yes/no, true/false)"; break;
    case T::Whole:
    case T::Number:
        if (s.rule) {
            o << s.rule;
            break;
        }
        o << (s.type == T::Whole ? "a whole number" : "a number");
        if (s.max >= kNoLimit)
            o << " >= " << s.min;
        else
            o << " in [" << s.min << ", " << s.max << "]";
        break;
    case T::Choice: {
        std::string c = s.choices;
        for (size_t p; (p = c.find('|')) != std::string::npos;)
            c.replace(p, 1, ", ");
        o << "one of " << c;
        break;
    }
    case T::Text: o << "text"; break;
    case T::Path: o << "a file or folder name"; break;
    }
    return o.str();
}

[[noreturn]] void invalid(const SettingSpec &s, const char *value)
{
    throw SettingError(std::string(s.name) + "='" + value + "' is invalid: expected " + accepted(s) + " (e.g. " +
                       s.name + "=" + (s.example ? s.example : "") + "); fix or unset it");
}

const SettingSpec &declared(const char *name, std::initializer_list<SettingType> types)
{
    const SettingSpec *s = find_setting(name);
    if (!s)
        throw std::logic_error(std::string("hetpu reads an undeclared setting ") + name +
                               " (declare it in common/settings.cpp)");
    for (SettingType t : types)
        if (s->type == t)
            return *s;
    throw std::logic_error(std::string(name) + " is declared as a " + type_name(s->type) + " setting");
}

std::optional<bool> parse_flag(const SettingSpec &s, const char *v)
{
    for (const char *yes : {"1", "on", "yes", "true"})
        if (strcasecmp(v, yes) == 0)
            return true;
    for (const char *no : {"0", "off", "no", "false"})
        if (strcasecmp(v, no) == 0)
            return false;
    invalid(s, v);
}

double parse_number(const SettingSpec &s, const char *v)
{
    const std::optional<double> x = finite_number(v);
    if (!x || *x < s.min || *x > s.max || (s.type == T::Whole && *x != std::floor(*x)) || (s.accepts && !s.accepts(*x)))
        invalid(s, v);
    return *x;
}

std::string parse_choice(const SettingSpec &s, const char *v)
{
    const std::string choices = std::string("|") + s.choices + "|";
    if (std::string(v).find('|') != std::string::npos || choices.find("|" + std::string(v) + "|") == std::string::npos)
        invalid(s, v);
    return v;
}

// Markdown cells: a '|' inside one would end it.
std::string cell(const std::string &text)
{
    std::string out;
    for (char c : text)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

}  // namespace

const std::vector<SettingSpec> &setting_specs() { return kSpecs; }

const SettingSpec *find_setting(const std::string &name)
{
    for (const SettingSpec &s : kSpecs)
        if (name == s.name)
            return &s;
    return nullptr;
}

const char *Settings::raw(const SettingSpec &spec) const
{
    const char *v = lookup_ ? lookup_(spec.name) : nullptr;
    return v && *v ? v : nullptr;
}

std::optional<bool> Settings::flag(const char *name) const
{
    const SettingSpec &s = declared(name, {T::Flag});
    const char *v = raw(s);
    return v ? parse_flag(s, v) : std::nullopt;
}

std::optional<uint64_t> Settings::whole(const char *name) const
{
    const SettingSpec &s = declared(name, {T::Whole});
    const char *v = raw(s);
    if (!v)
        return std::nullopt;
    // Through a double: exact up to 2^53, far beyond any block or count hetpu reads.
    return static_cast<uint64_t>(parse_number(s, v));
}

std::optional<double> Settings::number(const char *name) const
{
    const SettingSpec &s = declared(name, {T::Number});
    const char *v = raw(s);
    return v ? std::optional<double>(parse_number(s, v)) : std::nullopt;
}

std::optional<std::string> Settings::choice(const char *name) const
{
    const SettingSpec &s = declared(name, {T::Choice});
    const char *v = raw(s);
    return v ? std::optional<std::string>(parse_choice(s, v)) : std::nullopt;
}

std::optional<std::string> Settings::text(const char *name) const
{
    const SettingSpec &s = declared(name, {T::Text, T::Path});
    const char *v = raw(s);
    return v ? std::optional<std::string>(v) : std::nullopt;
}

std::string Settings::first_error() const
{
    for (const SettingSpec &s : kSpecs) {
        try {
            switch (s.type) {
            case T::Flag: flag(s.name); break;
            case T::Whole: whole(s.name); break;
            case T::Number: number(s.name); break;
            case T::Choice: choice(s.name); break;
            case T::Text:
            case T::Path: break;
            }
        } catch (const SettingError &e) {
            return e.what();
        }
    }
    return "";
}

std::string hetpu_home(const EnvLookup &lookup)
{
    if (std::optional<std::string> h = Settings(lookup).text("HETPU_HOME"))
        return *h;
    auto get = [&](const char *name) -> std::string {
        const char *v = lookup ? lookup(name) : nullptr;
        return v ? v : "";
    };
    if (std::string x = get("XDG_DATA_HOME"); !x.empty())
        return x + "/hetpu";
    if (std::string home = get("HOME"); !home.empty())
        return home + "/.local/share/hetpu";
    return "";
}

std::string settings_markdown_table()
{
    std::ostringstream o;
    o << "| variable | default | meaning |\n|---|---|---|\n";
    for (const SettingSpec &s : kSpecs)
        o << "| `" << s.name << "` | " << cell(s.default_text) << " | " << cell(s.doc) << " |\n";
    return o.str();
}

std::string settings_listing(const EnvLookup &lookup)
{
    std::ostringstream o;
    for (const SettingSpec &s : kSpecs) {
        const char *v = lookup ? lookup(s.name) : nullptr;
        o << s.name << "=" << (v && *v ? v : "") << (v && *v ? "" : "  (unset)") << "\n    " << s.doc
          << "\n    default " << s.default_text << "; accepts " << accepted(s) << "\n";
    }
    return o.str();
}

}  // namespace hetpu
