// SPDX-License-Identifier: LGPL-2.1-or-later
// How a device shares its time between the kernels of different processes, which decides
// whether co-locating jobs on one device can pay:
//
//   mps          NVIDIA's Multi-Process Service runs the kernels of several processes at
//                once on one device: co-located kernels each take their share of the SMs.
//   time-sliced  without MPS (the default on most clusters, and always on OpenCL) the device
//                takes turns between the processes' contexts: each of n co-located kernels
//                gets 1/n of the time, so co-location gains only where one job's kernels run
//                in another's idle gaps (its host phases).
//
// HETPU_MGB_COLOCATION=auto|mps|time-sliced chooses the model; `auto` (the default) looks for
// an MPS control daemon on CUDA and takes time-sliced on OpenCL.
#pragma once

#include <string>

namespace hetpu::mgb {

enum class Colocation { Mps, TimeSliced };
const char *colocation_name(Colocation c);  // "mps", "time-sliced"
bool parse_colocation(const std::string &name, Colocation &out);

// The setting's value: a model, or Auto (detect it).
enum class ColocationSetting { Auto, Mps, TimeSliced };
// Parses HETPU_MGB_COLOCATION (nullptr or empty: Auto). False with `error` set to a message
// that names the setting, the bad value and the accepted ones.
bool parse_colocation_setting(const char *value, ColocationSetting &out, std::string &error);

// What `auto` looks at on a CUDA node.
struct MpsProbe {
    // CUDA_MPS_PIPE_DIRECTORY (nullptr or empty: unset; the daemon then uses /tmp/nvidia-mps).
    const char *pipe_directory = nullptr;
    // The devices' compute mode as CUDA reports it, when known: exclusive-process is how MPS
    // is set up (without MPS it admits one process per device, so nothing co-locates).
    bool exclusive_process = false;
};
constexpr const char *kDefaultMpsPipeDirectory = "/tmp/nvidia-mps";

struct ColocationChoice {
    Colocation model = Colocation::TimeSliced;
    std::string reason;  // why, for the message the policy prints at start
};

// The model for a setting on a node with CUDA devices (`cuda`) or OpenCL only. Auto on CUDA:
// MPS when a control daemon's socket (`control`) is in the pipe directory, or the compute
// mode is exclusive-process; otherwise time-sliced. Auto on OpenCL: time-sliced (OpenCL has
// no MPS). An explicit model is taken as given.
ColocationChoice choose_colocation(ColocationSetting setting, bool cuda, const MpsProbe &probe);

}  // namespace hetpu::mgb
