// SPDX-License-Identifier: LGPL-2.1-or-later
// A queue of independent shell commands run N at a time, like the worker pool of the MGB
// paper's evaluation (C. Chen, C. Porter, S. Pande, "Effective GPU Sharing Under Compiler
// Guidance", Section V-A): every job is queued at t = 0, each worker takes the next one.
//
// A job is `/bin/sh -c LINE` (`exec LINE` for one simple command) in its own process group; the job is that whole group. When
// its shell exits, whatever it left running in the group is killed (a job's stray
// background processes would otherwise keep a device busy past its end). Past the timeout
// the group gets SIGTERM, then SIGKILL two seconds later: a hang (StarPU retrying an
// allocation forever) is recorded as timed out, not waited for.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hetpu::batch {

struct JobResult {
    size_t index = 0;  // line order among the jobs (0-based)
    std::string command;
    double start_s = 0;  // since the batch started
    double end_s = 0;
    int exit_status = -1;           // the shell's exit status; -1 when it ended by a signal
    int signal = 0;                 // the signal that ended it (0: none)
    bool timed_out = false;         // killed by us past the timeout
    bool crashed = false;           // ended by a signal we did not send (SIGSEGV, SIGABRT, ...)
    bool signal_via_shell = false;  // the crash was read from the shell's exit status 128 + signal
    bool ok() const { return exit_status == 0 && !timed_out && !crashed; }
};

// The line the job's /bin/sh -c runs: "exec LINE" when LINE is one simple command of a
// program (no shell syntax, not a builtin, no leading assignment), so that the program's
// death by a signal is seen as such; otherwise LINE unchanged.
std::string shell_line(const std::string &command);
// The crash signal a shell reports as exit status 128 + N (SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
// SIGILL, SIGSYS, SIGTRAP); 0 for any other status. A program that exits 139 by itself is
// taken for a crash too: no shell can tell the two apart.
int crash_signal_reported_by_shell(int exit_status);

struct BatchOptions {
    unsigned workers = 1;
    double timeout_s = 0;     // 0: none
    std::string log_dir;      // non-empty: job i's stdout and stderr go to DIR/job-<i>.out / .err
    bool quiet_jobs = false;  // no log dir: send the jobs' output to /dev/null instead of ours
};

struct BatchSummary {
    double makespan_s = 0;
    unsigned jobs = 0, ok = 0, failed = 0, timed_out = 0, crashed = 0;
    double throughput_jobs_per_min = 0;  // jobs that ended ok / makespan
    double mean_turnaround_s = 0;        // all jobs: end - batch start (all queued at t = 0)
};

// Non-empty lines of the file that do not start with '#' (after leading blanks).
std::vector<std::string> read_job_lines(const std::string &text);

// Runs the jobs; on_end is called in the parent as each job ends (progress, JSON lines).
// Throws std::runtime_error when a job cannot be started at all (fork or log file failure).
std::vector<JobResult> run_batch(const std::vector<std::string> &commands, const BatchOptions &options,
                                 const std::function<void(const JobResult &)> &on_start,
                                 const std::function<void(const JobResult &)> &on_end);

BatchSummary summarize(const std::vector<JobResult> &results);

}  // namespace hetpu::batch
