// SPDX-License-Identifier: LGPL-2.1-or-later
// accounting_overhead: what does the accounting hook cost per task? In one process, StarPU is
// started R times with accounting off and R times with it on (alternating, so drift and
// neighbours hit both alike); each start runs N tiny tasks (an empty CPU codelet, no data)
// and times submission to completion. Reports the median of each, the ratio on/off
// (target < 1.02; also the median of back-to-back pairs), the cost per task, the hook's cost
// measured directly (its pre/post pair called in a loop on a worker: steady even on a busy
// machine, where the end-to-end ratio swings by +-10%) and the ratio that implies, and the per-run cost of accounting (start + charge +
// ledger row), as a human line and a JSON line per policy.
//
//   accounting_overhead [--tasks N] [--reps R] [--policies eager,dmda] [--json FILE]
//
// Accounting summaries are silenced; the ledger is $HETPU_LEDGER, or a temporary file
// removed at exit (a benchmark never writes the user's ledger).
#include <hetpu/hetpu.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/json_line.h"
#include "common/cli_args.h"
#include "common/settings.h"

namespace {

using Clock = std::chrono::steady_clock;

void nothing(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
}

struct starpu_codelet tiny_cl = [] {
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = nothing;
    cl.nbuffers = 0;
    cl.name = "tiny";
    return cl;
}();

struct Timing {
    double tasks_s = 0;   // submit first .. all done
    double run_s = 0;     // hetpu_init .. hetpu_shutdown returned
    double hooks_ns = 0;  // one pre + post exec hook pair of the running policy, on a worker
};

// The direct measurement: on a worker thread, call the running policy's exec hooks (the
// accounting wrapper and whatever it wraps, or only the policy's own when accounting is
// off) for a dummy task many times. The difference on/off is the hook's cost per task,
// free of the scheduling noise that blurs the end-to-end ratio on a shared machine.
constexpr int probe_calls = 200000;
struct Probe {
    struct starpu_sched_policy *policy;
    double ns_per_pair;
};

void probe_hooks(void *buffers[], void *arg)
{
    (void)buffers;
    Probe *p = static_cast<Probe *>(arg);
    struct starpu_task *dummy = starpu_task_create();
    dummy->destroy = 0;
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < probe_calls; ++i) {
        if (p->policy->pre_exec_hook)
            p->policy->pre_exec_hook(dummy, 0);
        if (p->policy->post_exec_hook)
            p->policy->post_exec_hook(dummy, 0);
    }
    p->ns_per_pair = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / probe_calls;
    starpu_task_destroy(dummy);
}

struct starpu_codelet probe_cl = [] {
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = probe_hooks;
    cl.nbuffers = 0;
    cl.name = "probe_hooks";
    return cl;
}();

// One StarPU run of `n` tiny tasks. Returns false if StarPU does not start.
bool one_run(const char *policy, bool accounting, int n, Timing &t)
{
    setenv("HETPU_ACCOUNTING", accounting ? "1" : "0", 1);
    setenv("STARPU_SCHED", policy, 1);
    const Clock::time_point r0 = Clock::now();
    if (hetpu_init(nullptr) != 0)
        return false;
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
        struct starpu_task *task = starpu_task_create();
        task->cl = &tiny_cl;
        if (starpu_task_submit(task) != 0) {
            std::fprintf(stderr, "accounting_overhead: task submission failed\n");
            std::exit(1);
        }
    }
    starpu_task_wait_for_all();
    const Clock::time_point t1 = Clock::now();
    Probe probe{starpu_sched_ctx_get_sched_policy(0), 0};
    struct starpu_task *task = starpu_task_create();
    task->cl = &probe_cl;
    task->cl_arg = &probe;
    task->synchronous = 1;
    if (!probe.policy || starpu_task_submit(task) != 0) {
        std::fprintf(stderr, "accounting_overhead: cannot run the hook probe\n");
        std::exit(1);
    }
    t.hooks_ns = probe.ns_per_pair;
    hetpu_shutdown();
    const Clock::time_point r1 = Clock::now();
    t.tasks_s = std::chrono::duration<double>(t1 - t0).count();
    t.run_s = std::chrono::duration<double>(r1 - r0).count();
    return true;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos)
            comma = s.size();
        if (comma > start)
            out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

}  // namespace

int main(int argc, char **argv)
{
    int tasks = 20000, reps = 7;
    std::string policies = "eager,dmda", json_path;
    CLI::App app{"Tiny tasks with and without the accounting hook in one process, and the hook's cost per task.",
                 "accounting_overhead"};
    app.add_option("--tasks", tasks, "tasks per run")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--reps", reps, "runs per policy and setting")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--policies", policies, "StarPU policies, comma-separated")->capture_default_str();
    app.add_option("--json", json_path, "JSON lines to FILE")->type_name("FILE");
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    setenv("HETPU_ACCOUNTING_QUIET", "1", 1);
    std::string temp_ledger;
    if (!hetpu::Settings().text("HETPU_LEDGER")) {
        char dir[] = "/tmp/hetpu-bench-ledger.XXXXXX";
        if (!mkdtemp(dir)) {
            std::perror("accounting_overhead: mkdtemp");
            return 1;
        }
        temp_ledger = dir;
        setenv("HETPU_LEDGER", (temp_ledger + "/ledger.sqlite").c_str(), 1);
    }

    int status = 0;
    for (const std::string &policy : split(policies)) {
        std::vector<double> off, on, run_off, run_on, hooks_off, hooks_on;
        Timing warm;
        if (!one_run(policy.c_str(), false, tasks, warm)) {  // warm-up: StarPU's first start is slower
            std::fprintf(stderr, "accounting_overhead: StarPU did not start under %s\n", policy.c_str());
            status = 1;
            continue;
        }
        for (int r = 0; r < reps; ++r) {
            for (bool acc : r % 2 ? std::vector<bool>{true, false} : std::vector<bool>{false, true}) {
                Timing t;
                if (!one_run(policy.c_str(), acc, tasks, t))
                    return 1;
                (acc ? on : off).push_back(t.tasks_s);
                (acc ? run_on : run_off).push_back(t.run_s - t.tasks_s);
                (acc ? hooks_on : hooks_off).push_back(t.hooks_ns);
            }
        }
        const double m_off = median(off), m_on = median(on);
        const double ratio = m_on / m_off;
        // Each rep runs on and off back to back: the median of those paired ratios cancels
        // slow drifts in the machine's load that the medians of the two sets do not.
        std::vector<double> paired;
        for (size_t i = 0; i < on.size() && i < off.size(); ++i)
            paired.push_back(on[i] / off[i]);
        const double paired_ratio = median(paired);
        const double per_task_ns = (m_on - m_off) / tasks * 1e9;
        const double run_cost_ms = (median(run_on) - median(run_off)) * 1e3;
        const double hook_ns = median(hooks_on) - median(hooks_off);
        const double task_ns = m_off / tasks * 1e9;
        const double direct_ratio = 1 + hook_ns / task_ns;
        std::printf("%-6s %d tiny tasks, median of %d: off %.4f s, on %.4f s, ratio %.4f (paired %.4f; target < 1.02), "
                    "%+.0f ns per task; start + shutdown %+.1f ms per run\n"
                    "       hook probe: %.1f ns per task (pre+post) against %.0f ns per task without accounting -> "
                    "ratio %.4f\n",
                    policy.c_str(), tasks, reps, m_off, m_on, ratio, paired_ratio, per_task_ns, run_cost_ms, hook_ns,
                    task_ns, direct_ratio);
        const hetpu::JsonRecord w = {{"bench", "accounting_overhead"},
                                     {"policy", policy},
                                     {"tasks", tasks},
                                     {"reps", reps},
                                     {"median_off_s", m_off},
                                     {"median_on_s", m_on},
                                     {"ratio", ratio},
                                     {"paired_ratio", paired_ratio},
                                     {"target", 1.02},
                                     {"per_task_ns", per_task_ns},
                                     {"run_cost_ms", run_cost_ms},
                                     {"hook_ns", hook_ns},
                                     {"task_ns_off", task_ns},
                                     {"direct_ratio", direct_ratio}};
        if (!json_path.empty()) {
            if (FILE *f = std::fopen(json_path.c_str(), "a")) {
                std::fprintf(f, "%s\n", hetpu::json_line(w).c_str());
                std::fclose(f);
            } else {
                std::perror(json_path.c_str());
                status = 1;
            }
        }
    }
    if (!temp_ledger.empty()) {
        unlink((temp_ledger + "/ledger.sqlite").c_str());
        unlink((temp_ledger + "/ledger.sqlite-wal").c_str());
        unlink((temp_ledger + "/ledger.sqlite-shm").c_str());
        rmdir(temp_ledger.c_str());
    }
    return status;
}
