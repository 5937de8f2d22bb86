// TEMPORARY: the two helpers of perfmodels/energy the accounting core uses, until the
// lead's implementation is merged from main (then this file goes).
#include "perfmodels/energy/energy_source.h"

namespace hetpu::energy {
const char *worker_type_name(WorkerType t)
{
    return t == WorkerType::cpu ? "cpu" : t == WorkerType::opencl ? "opencl" : "cuda";
}
Device device_of(WorkerType t, bool opencl_on_cpu)
{
    return t == WorkerType::cpu || (t == WorkerType::opencl && opencl_on_cpu) ? Device::cpu : Device::gpu;
}
}  // namespace hetpu::energy
