// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/node_planner.h"

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

namespace hetpu {

namespace {

std::string host_name()
{
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0)
        return "unknown";
    return buf;
}

// Appends trace lines. They arrive from completion callbacks, which the runner serialises,
// so no lock is needed here; each is flushed so that a crashed run leaves its trace.
class AppendedLines {
public:
    explicit AppendedLines(const std::string &path) : file_(std::fopen(path.c_str(), "a")) {}
    ~AppendedLines()
    {
        if (file_)
            std::fclose(file_);
    }
    AppendedLines(const AppendedLines &) = delete;
    AppendedLines &operator=(const AppendedLines &) = delete;
    bool open() const { return file_ != nullptr; }
    void write(const std::string &line)
    {
        std::fprintf(file_, "%s\n", line.c_str());
        std::fflush(file_);
    }

private:
    FILE *file_;
};

}  // namespace

std::unique_ptr<BlockPlanner> make_node_planner(const PlannerPolicy &policy, const std::vector<PlannerWorker> &workers,
                                                const BlockRules &rules)
{
    PlannerContext context;
    context.policy = policy.name;
    context.say = [name = policy.name](const std::string &line) {
        std::fprintf(stderr, "hetpu: %s: %s\n", name.c_str(), line.c_str());
    };
    context.models_home = hetpu_home();
    context.host = host_name();
    if (policy.uses & kUsesTrace) {
        std::optional<std::string> path;
        try {
            path = Settings().text("HETPU_TRACE");
        } catch (const SettingError &e) {
            context.report(e.what());
            return nullptr;
        }
        if (path) {
            auto lines = std::make_shared<AppendedLines>(*path);
            if (!lines->open()) {
                context.report("cannot append to HETPU_TRACE='" + *path + "'; unset it or fix the path");
                return nullptr;
            }
            context.trace = [lines](const std::string &line) { lines->write(line); };
        }
    }
    return policy.make(context, workers, rules);
}

}  // namespace hetpu
