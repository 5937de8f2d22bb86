// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/batch/batch_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace hetpu::batch {

namespace {

constexpr double kKillGraceS = 2.0;  // SIGTERM first: a StarPU program may flush traces

using Clock = std::chrono::steady_clock;

struct Running {
    pid_t pid = 0;
    JobResult result;
    double deadline_s = 0;  // 0: none
    double kill_at_s = 0;   // set once SIGTERM was sent
};

void no_op_handler(int) {}

}  // namespace

std::string shell_line(const std::string &command)
{
    // Shell syntax that exec would change the meaning of: lists, pipes, redirections,
    // expansions, globs, grouping, comments, line breaks.
    if (command.find_first_of("|&;<>()$`\\*?[#~{}!\n") != std::string::npos)
        return command;
    const size_t start = command.find_first_not_of(" \t");
    if (start == std::string::npos)
        return command;
    const std::string first = command.substr(start, command.find_first_of(" \t", start) - start);
    // `VAR=value prog` (an assignment, not a program), and the shell's own commands, which
    // exec cannot run.
    static const char *const builtins[] = {
        "exit",    "return",   "cd",    "export", "set",      "unset",   "eval",  "exec",   ".",
        ":",       "wait",     "trap",  "read",   "shift",    "times",   "umask", "ulimit", "alias",
        "unalias", "readonly", "local", "break",  "continue", "getopts", "hash",  "type",   "command",
        "fg",      "bg",       "jobs",  "if",     "for",      "while",   "until", "case",   "source"};
    if (first.find('=') != std::string::npos ||
        std::any_of(std::begin(builtins), std::end(builtins), [&](const char *b) { return first == b; }))
        return command;
    return "exec " + command;
}

int crash_signal_reported_by_shell(int exit_status)
{
    // A shell whose last command died of signal N exits with 128 + N. Only signals that
    // mean a crash are decoded: SIGTERM, SIGINT or SIGKILL may be a job's own way to stop.
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGSYS, SIGTRAP};
    for (int sig : crash_signals)
        if (exit_status == 128 + sig)
            return sig;
    return 0;
}

namespace {

int open_log(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot open '" + path + "': " + std::strerror(errno));
    return fd;
}

// SIGCHLD is blocked in the parent for the whole run and waited for with sigtimedwait: no
// handler races, no busy polling, and a job's end is seen at once. A no-op handler replaces
// a possible SIG_IGN, under which the kernel would reap children itself.
class SigchldScope {
public:
    SigchldScope()
    {
        sigemptyset(&set_);
        sigaddset(&set_, SIGCHLD);
        sigprocmask(SIG_BLOCK, &set_, &old_mask_);
        struct sigaction sa {};
        sa.sa_handler = no_op_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGCHLD, &sa, &old_action_);
    }
    ~SigchldScope()
    {
        sigaction(SIGCHLD, &old_action_, nullptr);
        sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    }
    const sigset_t &set() const { return set_; }
    const sigset_t &old_mask() const { return old_mask_; }

private:
    sigset_t set_, old_mask_;
    struct sigaction old_action_ {};
};

}  // namespace

std::vector<std::string> read_job_lines(const std::string &text)
{
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#')
            continue;
        out.push_back(line);
    }
    return out;
}

std::vector<JobResult> run_batch(const std::vector<std::string> &commands, const BatchOptions &options,
                                 const std::function<void(const JobResult &)> &on_start,
                                 const std::function<void(const JobResult &)> &on_end)
{
    const auto t0 = Clock::now();
    auto now_s = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    SigchldScope sigchld;
    std::vector<JobResult> done;
    std::vector<Running> running;
    size_t next = 0;
    const unsigned workers = std::max(1u, options.workers);

    auto spawn = [&](size_t i) {
        int out_fd = -1, err_fd = -1;
        if (!options.log_dir.empty()) {
            out_fd = open_log(options.log_dir + "/job-" + std::to_string(i) + ".out");
            err_fd = open_log(options.log_dir + "/job-" + std::to_string(i) + ".err");
        } else if (options.quiet_jobs) {
            out_fd = open_log("/dev/null");
            err_fd = ::dup(out_fd);
        }
        const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        Running r;
        r.result.index = i;
        r.result.command = commands[i];
        r.result.start_s = now_s();
        const std::string line = shell_line(commands[i]);  // built before fork: the child only execs
        const pid_t pid = ::fork();
        if (pid < 0)
            throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
        if (pid == 0) {
            // Child: own process group (so the whole job can be signalled), our signal mask
            // as it was before the run, then the shell.
            ::setpgid(0, 0);
            sigprocmask(SIG_SETMASK, &sigchld.old_mask(), nullptr);
            if (null_in >= 0)
                ::dup2(null_in, 0);
            if (out_fd >= 0)
                ::dup2(out_fd, 1);
            if (err_fd >= 0)
                ::dup2(err_fd, 2);
            // A simple command replaces the shell, so its own death by a signal reaches us
            // (dash does not exec the last command itself: a crash read as exit 139).
            ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char *>(nullptr));
            _exit(127);
        }
        ::setpgid(pid, pid);  // both sides: whichever runs first, the group exists before any kill
        for (int fd : {out_fd, err_fd, null_in})
            if (fd >= 0)
                ::close(fd);
        r.pid = pid;
        r.deadline_s = options.timeout_s > 0 ? r.result.start_s + options.timeout_s : 0;
        running.push_back(r);
        if (on_start)
            on_start(running.back().result);
    };

    while (next < commands.size() || !running.empty()) {
        while (running.size() < workers && next < commands.size())
            spawn(next++);

        // Reap whatever ended.
        for (size_t k = 0; k < running.size();) {
            int status = 0;
            const pid_t got = ::waitpid(running[k].pid, &status, WNOHANG);
            if (got != running[k].pid) {
                ++k;
                continue;
            }
            Running r = running[k];
            running.erase(running.begin() + long(k));
            ::kill(-r.pid, SIGKILL);  // leftovers of the job's group; ESRCH when none
            r.result.end_s = now_s();
            if (WIFEXITED(status)) {
                r.result.exit_status = WEXITSTATUS(status);
                if (const int sig = crash_signal_reported_by_shell(r.result.exit_status); sig && !r.result.timed_out) {
                    r.result.signal = sig;
                    r.result.crashed = true;
                    r.result.signal_via_shell = true;
                }
            } else if (WIFSIGNALED(status)) {
                r.result.signal = WTERMSIG(status);
                r.result.crashed = !r.result.timed_out;
            }
            done.push_back(r.result);
            if (on_end)
                on_end(done.back());
        }
        if (running.size() < workers && next < commands.size())
            continue;  // a slot is free: fill it before waiting
        if (running.empty())
            continue;

        // Timeouts: SIGTERM at the deadline, SIGKILL after the grace period.
        const double t = now_s();
        double wake = t + 1.0;
        for (Running &r : running) {
            if (r.deadline_s > 0 && r.kill_at_s == 0 && t >= r.deadline_s) {
                r.result.timed_out = true;
                ::kill(-r.pid, SIGTERM);
                r.kill_at_s = t + kKillGraceS;
            } else if (r.kill_at_s > 0 && t >= r.kill_at_s) {
                ::kill(-r.pid, SIGKILL);
                r.kill_at_s = t + kKillGraceS;  // again later if it somehow survives
            }
            if (r.kill_at_s > 0)
                wake = std::min(wake, r.kill_at_s);
            else if (r.deadline_s > 0)
                wake = std::min(wake, r.deadline_s);
        }
        const double wait_s = std::max(0.0, wake - t);
        struct timespec ts;
        ts.tv_sec = time_t(wait_s);
        ts.tv_nsec = long((wait_s - double(ts.tv_sec)) * 1e9);
        ::sigtimedwait(&sigchld.set(), nullptr, &ts);  // a child ended, or time to check deadlines
    }
    std::sort(done.begin(), done.end(), [](const JobResult &a, const JobResult &b) { return a.index < b.index; });
    return done;
}

BatchSummary summarize(const std::vector<JobResult> &results)
{
    BatchSummary s;
    s.jobs = unsigned(results.size());
    double turnaround = 0;
    for (const JobResult &r : results) {
        s.makespan_s = std::max(s.makespan_s, r.end_s);
        turnaround += r.end_s;
        if (r.ok())
            ++s.ok;
        else if (r.timed_out)
            ++s.timed_out;
        else if (r.crashed)
            ++s.crashed;
        else
            ++s.failed;
    }
    s.mean_turnaround_s = s.jobs ? turnaround / s.jobs : 0;
    s.throughput_jobs_per_min = s.makespan_s > 0 ? 60.0 * s.ok / s.makespan_s : 0;
    return s;
}

}  // namespace hetpu::batch
