// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/mgb/core/colocation.h"

#include <sys/stat.h>

namespace hetpu::mgb {

namespace {

// The MPS control daemon listens on a Unix socket named `control` in its pipe directory;
// the directory alone, or a plain file there, may be left over from a daemon that has quit.
// (Older daemons used a named pipe.)
bool control_socket_in(const std::string &directory)
{
    struct stat st;
    const std::string path = directory + "/control";
    return stat(path.c_str(), &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode));
}

}  // namespace

const char *colocation_name(Colocation c) { return c == Colocation::Mps ? "mps" : "time-sliced"; }

bool parse_colocation(const std::string &name, Colocation &out)
{
    for (Colocation c : {Colocation::Mps, Colocation::TimeSliced})
        if (name == colocation_name(c)) {
            out = c;
            return true;
        }
    return false;
}

bool parse_colocation_setting(const char *value, ColocationSetting &out, std::string &error)
{
    const std::string v = value ? value : "";
    if (v.empty() || v == "auto") {
        out = ColocationSetting::Auto;
        return true;
    }
    Colocation c;
    if (parse_colocation(v, c)) {
        out = c == Colocation::Mps ? ColocationSetting::Mps : ColocationSetting::TimeSliced;
        return true;
    }
    error = "HETPU_MGB_COLOCATION='" + v +
            "' is not a co-location model: use auto (detect MPS), mps (an MPS daemon runs kernels of several "
            "processes at once) or time-sliced (no MPS: processes take turns on a device)";
    return false;
}

ColocationChoice choose_colocation(ColocationSetting setting, bool cuda, const MpsProbe &probe)
{
    ColocationChoice choice;
    if (setting == ColocationSetting::Mps) {
        choice.model = Colocation::Mps;
        choice.reason = "set by HETPU_MGB_COLOCATION";
        return choice;
    }
    if (setting == ColocationSetting::TimeSliced) {
        choice.model = Colocation::TimeSliced;
        choice.reason = "set by HETPU_MGB_COLOCATION";
        return choice;
    }
    if (!cuda) {
        choice.model = Colocation::TimeSliced;
        choice.reason = "auto: OpenCL devices take turns between processes";
        return choice;
    }
    const bool named = probe.pipe_directory && *probe.pipe_directory;
    const std::string directory = named ? probe.pipe_directory : kDefaultMpsPipeDirectory;
    if (control_socket_in(directory)) {
        choice.model = Colocation::Mps;
        choice.reason = "auto: an MPS control daemon listens in " + directory;
    } else if (probe.exclusive_process) {
        choice.model = Colocation::Mps;
        choice.reason = "auto: the devices' compute mode is exclusive-process, as MPS runs them";
    } else {
        choice.model = Colocation::TimeSliced;
        choice.reason =
            "auto: no MPS control daemon in " + directory + " (set CUDA_MPS_PIPE_DIRECTORY if it runs elsewhere)";
    }
    return choice;
}

}  // namespace hetpu::mgb
