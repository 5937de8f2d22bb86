// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/start/opencl_on_cpu.h"

#include <starpu.h>

namespace hetpu {

bool opencl_workers_run_on_cpu()
{
#ifdef STARPU_USE_OPENCL
    for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
        if (starpu_worker_get_type(static_cast<int>(w)) != STARPU_OPENCL_WORKER)
            continue;
        cl_device_id device;
        starpu_opencl_get_device(starpu_worker_get_devid(static_cast<int>(w)), &device);
        cl_device_type type = 0;
        // A device that cannot say what it is counts as a GPU: charging its energy to the
        // CPU sensor would hide it.
        if (clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr) != CL_SUCCESS ||
            !(type & CL_DEVICE_TYPE_CPU))
            return false;
    }
#endif
    return true;
}

}  // namespace hetpu
