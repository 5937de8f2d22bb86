// SPDX-License-Identifier: LGPL-2.1-or-later
// The accounting configuration file (TOML): one table per partition, plus optional
// site settings.
//
//   [accounting]                 # optional
//   partition = "gpu"            # partition a run on this machine is charged to
//   grid_gco2e_per_kwh = 450     # carbon intensity of the electricity, for gCO2e figures
//
//   [partition.gpu]
//   cores_per_node = 64          # required
//   mem_gib_per_node = 256       # required
//   cpu_sockets = 1              # default 1
//   cpu_tdp_w = 280              # per socket; required for a GPU partition
//   gpus_per_node = 4            # default 0
//   gpu_tdp_w = 560              # per GPU; required when gpus_per_node > 0
//   gpu_sms = 108                # optional, SM-based comparison model
//   cpu_peak_flops = 1.5e12      # optional, per socket, peak-performance comparison model
//   gpu_peak_flops = 9.7e12      # optional, per GPU
//   tres_billing_weights = "CPU=1,Mem=0.25G,GRES/gpu=48"   # optional, the centre's Slurm scheme
//
// Unknown keys are errors (a typo must not silently fall back to a default), and every
// error names the file, the line and the key.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "accounting_hook/core/partition.h"

namespace hetpu::accounting {

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct AccountingConfig {
    std::string source;                 // file name, for messages
    std::vector<Partition> partitions;  // in file order
    std::string default_partition;      // [accounting] partition, "" if not given
    std::optional<double> grid_gco2e_per_kwh;

    const Partition *find(const std::string &name) const;
    // `name`, else [accounting].partition, else the only partition. Throws ConfigError
    // listing the partitions when the choice is ambiguous or the name unknown.
    const Partition &choose(const std::string &name) const;
};

// Throws ConfigError ("FILE:LINE: ...") on syntax errors, unknown keys, wrong types, and
// partitions the model cannot use.
AccountingConfig parse_accounting_config(const std::string &text, const std::string &source);
AccountingConfig load_accounting_config(const std::string &path);

}  // namespace hetpu::accounting
