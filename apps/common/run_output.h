// SPDX-License-Identifier: LGPL-2.1-or-later
// Where an app's results go: the human summary on stdout and, with --json FILE, one JSON
// line per repetition appended to FILE. Every write is checked (output_file.h): a result
// that cannot be written makes the run fail with the reason, never a silent loss.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "apps/common/output_file.h"

namespace hetpu::apps {

class RunOutput {
public:
    // `program` prefixes the messages; an empty `json_path`: no JSON lines.
    RunOutput(const char *program, std::string json_path) : program_(program), path_(std::move(json_path)) {}
    RunOutput(const RunOutput &) = delete;
    RunOutput &operator=(const RunOutput &) = delete;
    ~RunOutput()
    {
        if (json_)
            std::fclose(json_);
    }

    // Opens the --json file for appending, before any work so that a bad path costs
    // nothing. Returns false after saying why it cannot.
    bool open()
    {
        if (path_.empty())
            return true;
        json_ = std::fopen(path_.c_str(), "a");
        if (!json_)
            std::fprintf(stderr, "%s: cannot open --json file '%s': %s\n", program_, path_.c_str(),
                         std::strerror(errno));
        return json_ != nullptr;
    }

    // After a repetition's summary is printed: flushes it and appends the JSON line, so that
    // a run killed later keeps both. After a failed write later lines are not attempted.
    void add(const std::string &json_line)
    {
        std::fflush(stdout);
        if (json_ && !json_error_)
            json_error_ = append_line(json_, json_line);
    }

    // A repetition's human summary on stdout, then its JSON line.
    void add(const std::string &summary, const std::string &json_line)
    {
        std::fputs(summary.c_str(), stdout);
        add(json_line);
    }

    // Flushes and closes the file and stdout. Returns 1 when anything could not be written
    // (said on stderr), else 0.
    int close()
    {
        int failed = 0;
        if (json_) {
            failed |= close_output(json_, program_, "--json file '" + path_ + "'", json_error_) != 0;
            json_ = nullptr;
        }
        failed |= close_output(stdout, program_, "the standard output") != 0;
        return failed;
    }

    // The run's exit status once the output is closed: `status`, or 1 when anything could not
    // be written.
    int finish(int status) { return close() != 0 ? 1 : status; }

private:
    const char *program_;
    std::string path_;
    std::FILE *json_ = nullptr;
    int json_error_ = 0;  // the first failed write's errno
};

}  // namespace hetpu::apps
