// SPDX-License-Identifier: LGPL-2.1-or-later
// Whether the running StarPU's OpenCL workers are CPU devices (PoCL, STARPU_OPENCL_ON_CPUS):
// their energy is then CPU energy and they hold no GPU. Asked of the devices themselves, so
// the accounting hook and `hetpu calibrate` classify workers the same way.
#pragma once

namespace hetpu {

// True when every OpenCL worker's device reports CL_DEVICE_TYPE_CPU (and when there is no
// OpenCL worker). Call while StarPU runs.
bool opencl_workers_run_on_cpu();

}  // namespace hetpu
