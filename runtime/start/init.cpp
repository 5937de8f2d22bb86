// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu_init()/hetpu_shutdown() and the policy resolution they share with the preload
// library. StarPU's own resolution cannot be used: a known name in STARPU_SCHED beats
// conf.sched_policy, and an unknown one silently falls back to a default policy.
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/settings.h"
#include "runtime/mpi/mpi_state.h"
#include "runtime/start/run_observer.h"
#include "runtime/start/starpu_start.h"

namespace hetpu {

namespace {

// Two locks, because StarPU calls back into hetpu from inside starpu_initialize (policy
// init_sched on this thread, push/pop on the workers it starts): `start` serialises whole
// start-ups and is taken by nothing StarPU can call, `mutex` guards the fields below and is
// never held across a call into StarPU.
struct StartState {
    std::mutex start;
    std::mutex mutex;
    bool started = false;
    unsigned starts = 0;  // successful starpu_initialize calls made through here, not yet shut down
    bool started_by_hetpu_init = false;
    bool abandoned = false;  // abandon_run(): the shutdown ahead ends no real run
    std::string policy_name;
    const RegisteredPolicy *hetpu_policy = nullptr;
    struct starpu_conf conf;  // StarPU keeps reading the conf it was started with
};

StartState &state()
{
    static StartState s;
    return s;
}

thread_local bool t_inside_start = false;
thread_local std::string t_start_failure;

// A few words on a failed StarPU start: starpu_init's -ENODEV is by far the usual one.
std::string initialize_failure(int ret)
{
    if (ret == -ENODEV)
        return "no usable worker: StarPU found no CPU, CUDA or OpenCL worker (check STARPU_NCPU, STARPU_NCUDA, "
               "STARPU_NOPENCL)";
    return std::string("StarPU failed to start: ") + std::strerror(-ret);
}

// Constant-initialised, so a RunObserver registered by another file's static initializer
// is never overwritten by this one's.
const RunObserver *g_run_observer = nullptr;

// Hides STARPU_SCHED for the lifetime of the object, restoring it afterwards so that the
// user's environment is unchanged once StarPU has started.
class HiddenEnv {
public:
    explicit HiddenEnv(const char *name) : name_(name)
    {
        if (const char *v = process_env(name)) {
            saved_ = v;
            had_ = true;
            unsetenv(name);
        }
    }
    ~HiddenEnv()
    {
        if (had_)
            setenv(name_, saved_.c_str(), 1);
    }
    HiddenEnv(const HiddenEnv &) = delete;
    HiddenEnv &operator=(const HiddenEnv &) = delete;

private:
    const char *name_;
    std::string saved_;
    bool had_ = false;
};

}  // namespace

void set_run_observer(const RunObserver *observer) { g_run_observer = observer; }
const RunObserver *run_observer() { return g_run_observer; }

RequestedPolicy requested_policy(const struct starpu_conf *conf)
{
    if (const char *env = process_env("STARPU_SCHED"); env && *env)
        return {env, "STARPU_SCHED"};
    if (conf && conf->sched_policy_name && *conf->sched_policy_name)
        return {conf->sched_policy_name, "starpu_conf.sched_policy_name"};
    return {"", ""};
}

bool inside_start_starpu() { return t_inside_start; }

std::string last_start_failure() { return t_start_failure; }

const RegisteredPolicy *running_hetpu_policy()
{
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().started ? state().hetpu_policy : nullptr;
}

void mark_started_by_hetpu_init()
{
    std::lock_guard<std::mutex> lock(state().mutex);
    state().started_by_hetpu_init = true;
}

void abandon_run()
{
    std::lock_guard<std::mutex> lock(state().mutex);
    state().abandoned = true;
}

void note_starpu_shutdown()
{
    bool abandoned;
    {
        // StarPU counts its initialisations and stops at the matching last shutdown; so do
        // we, or the first of several threads to shut down would end the accounted run.
        std::lock_guard<std::mutex> lock(state().mutex);
        if (state().starts > 1) {
            --state().starts;
            return;
        }
        if (!state().started)
            return;
        abandoned = state().abandoned;
    }
    if (const RunObserver *o = run_observer()) {
        if (abandoned)
            o->run_abandoned();
        else
            o->run_finished();  // e.g. charge the run that just ended (no-op when it was not observed)
    }
    std::lock_guard<std::mutex> lock(state().mutex);
    state().abandoned = false;
    state().starts = 0;
    state().started = false;
    state().started_by_hetpu_init = false;
    state().hetpu_policy = nullptr;
    state().policy_name.clear();
}

int start_starpu(struct starpu_conf *user_conf, int *argc, char ***argv, InitializeFn initialize, HelpAction help,
                 WhenRunning when_running)
{
    StartState &s = state();
    // Held until StarPU runs: a second caller arriving meanwhile must neither reset the conf
    // StarPU is reading nor see STARPU_SCHED hidden (it then started StarPU under its default
    // policy, lws, in about half of the runs with five threads).
    std::unique_lock<std::mutex> start_lock(s.start);
    t_start_failure.clear();
    bool running;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        running = s.started;
    }
    if (running) {
        if (when_running == WhenRunning::Refuse) {
            t_start_failure = "StarPU already runs in this process";
            return -EALREADY;
        }
        // StarPU is up under the resolved policy: its own reference count is all that
        // changes, so the caller's conf goes through untouched.
        const int ret = initialize(user_conf, argc, argv);
        if (ret == 0) {
            std::lock_guard<std::mutex> lock(s.mutex);
            ++s.starts;
        }
        return ret;
    }

    // Every HETPU_* setting is checked here, before any work: an invalid value fails the
    // start with a message that names it, whichever module would read it later.
    const Settings settings;
    if (const std::string bad = settings.first_error(); !bad.empty()) {
        std::fprintf(stderr, "hetpu: %s\n", bad.c_str());
        t_start_failure = bad;
        return -EINVAL;
    }

    if (user_conf)
        s.conf = *user_conf;
    else
        starpu_conf_init(&s.conf);
    struct starpu_conf &conf = s.conf;

    const RequestedPolicy asked = requested_policy(&conf);
    const std::string &requested = asked.name;
    const char *source = asked.source;

    PolicyCatalog catalog = build_policy_catalog();
    if (requested == "help") {
        std::fputs(catalog.help_text().c_str(), stdout);
        std::fflush(stdout);
        if (help == HelpAction::Exit) {
            start_lock.unlock();  // exit() destroys the state: never with a lock held
            std::exit(0);
        }
        return HETPU_INIT_HELP_SHOWN;
    }

    const RegisteredPolicy *hetpu_policy = nullptr;
    if (!requested.empty()) {
        if ((hetpu_policy = find_registered_policy(requested)))
            conf.sched_policy = hetpu_policy->policy;
        else if (struct starpu_sched_policy *builtin = find_builtin_policy(requested))
            conf.sched_policy = builtin;
        else {
            std::fputs(catalog.unknown_name_message(requested, source).c_str(), stderr);
            t_start_failure = "unknown policy '" + requested + "' (" + source + ")";
            return -EINVAL;
        }
        conf.sched_policy_name = nullptr;
    } else if (conf.sched_policy) {
        hetpu_policy = find_registered_policy(conf.sched_policy);
    }

    // The run observer (the accounting hook, accounting_hook/): StarPU runs a copy of the
    // resolved policy whose exec hooks also count busy time per worker, so every run is
    // charged whichever policy it uses. With no policy named, StarPU's own default is
    // resolved here so it is wrapped too.
    const RunObserver *observer = run_observer();
    const bool observed = observer && observer->enabled();
    if (observed) {
        struct starpu_sched_policy *base = conf.sched_policy;
        if (!base && !(conf.sched_policy_name && *conf.sched_policy_name))
            base = find_builtin_policy(starpu_default_policy);
        if (base)
            conf.sched_policy = observer->wrap_policy(base);
    }

    int ret;
    {
        HiddenEnv hidden("STARPU_SCHED");
        t_inside_start = true;
        ret = initialize(&conf, argc, argv);
        t_inside_start = false;
    }
    if (ret != 0) {
        t_start_failure = initialize_failure(ret);
        return ret;
    }

    struct starpu_sched_policy *running_policy = starpu_sched_ctx_get_sched_policy(0);
    std::string name = running_policy && running_policy->policy_name ? running_policy->policy_name : requested;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.started = true;
        s.starts = 1;
        s.hetpu_policy = hetpu_policy;
        s.policy_name = name;
    }
    if (observed && conf.sched_policy)
        observer->run_started(name.c_str());

    if (settings.flag_or("HETPU_VERBOSE", false)) {
        char workers[128];
        hetpu_describe_workers(workers, sizeof workers);
        std::fprintf(stderr, "hetpu: policy %s on %s\n", name.c_str(), workers);
    }
    return 0;
}

}  // namespace hetpu

extern "C" int hetpu_init(struct starpu_conf *conf)
{
    int ret;
    try {
        ret = hetpu::start_starpu(conf, nullptr, nullptr, &starpu_initialize, hetpu::HelpAction::Return,
                                  hetpu::WhenRunning::Refuse);
    } catch (const std::exception &e) {  // the API is C: report, never throw
        std::fprintf(stderr, "hetpu: %s while starting StarPU\n", e.what());
        return -ENOMEM;
    }
    if (ret == 0) {
        std::lock_guard<std::mutex> lock(hetpu::state().mutex);
        hetpu::state().started_by_hetpu_init = true;
    }
    return ret;
}

extern "C" void hetpu_shutdown(void)
{
    bool ours;
    {
        std::lock_guard<std::mutex> lock(hetpu::state().mutex);
        ours = hetpu::state().started_by_hetpu_init;
    }
    if (!ours)
        return;
    // Losing backup copies of returned jobs still run tasks whose callbacks use StarPU.
    hetpu_divisible_wait_copies();
    hetpu::mpi_stop_starpu_mpi();
    starpu_shutdown();
    hetpu::note_starpu_shutdown();
    hetpu::mpi_after_shutdown();
}

extern "C" const char *hetpu_policy_name(void)
{
    std::lock_guard<std::mutex> lock(hetpu::state().mutex);
    return hetpu::state().started ? hetpu::state().policy_name.c_str() : nullptr;
}

extern "C" int hetpu_policy_is_hetpu(void) { return hetpu::running_hetpu_policy() != nullptr; }

extern "C" void hetpu_print_policies(FILE *out) { std::fputs(hetpu::build_policy_catalog().help_text().c_str(), out); }

extern "C" int hetpu_describe_workers(char *buf, size_t size)
{
    if (!buf || size == 0)
        return -EINVAL;
    struct {
        enum starpu_worker_archtype type;
        const char *label;
    } kinds[] = {{STARPU_CPU_WORKER, "CPU"}, {STARPU_CUDA_WORKER, "CUDA"}, {STARPU_OPENCL_WORKER, "OpenCL"}};
    std::string text;
    unsigned last = 0;
    for (const auto &k : kinds) {
        int n = starpu_worker_get_count_by_type(k.type);
        if (n <= 0)
            continue;
        if (!text.empty())
            text += " + ";
        text += std::to_string(n) + " " + k.label;
        last = static_cast<unsigned>(n);
    }
    if (text.empty())
        text = "no";
    text += last > 1 ? " workers" : " worker";
    std::snprintf(buf, size, "%s", text.c_str());
    return 0;
}
