// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL exposes no warp or SM limits the way CUDA does. An OpenCL device is described with
// its compute units as SMs, CUDA's usual per-SM limits (64 warps of 32, 32 blocks), and its
// local memory per compute unit as shared memory: the same order of magnitude as the GPUs
// the algorithms were designed for, so the balance between devices stays meaningful.
#include "node_arbiter/device_discovery.h"

#include <algorithm>
#include <cstdio>
#include <map>

#ifdef STARPU_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace hetpu::mgb {

namespace {

uint64_t node_capacity(unsigned node)
{
    const starpu_ssize_t total = starpu_memory_get_total(node);
    return total > 0 ? static_cast<uint64_t>(total) : 0;
}

#ifdef STARPU_USE_OPENCL
std::string opencl_key(int devid)
{
    cl_device_id device;
    starpu_opencl_get_device(devid, &device);
    cl_platform_id platform = nullptr;
    if (clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) != CL_SUCCESS)
        return "opencl:?:" + std::to_string(devid);
    // Platform and device indices as the ICD loader enumerates them: the same in every
    // process of the node, unlike StarPU's devid, which depends on STARPU_OPENCL_ON_CPUS
    // and the like.
    cl_uint nplatforms = 0;
    clGetPlatformIDs(0, nullptr, &nplatforms);
    std::vector<cl_platform_id> platforms(nplatforms);
    clGetPlatformIDs(nplatforms, platforms.data(), nullptr);
    const auto p = std::find(platforms.begin(), platforms.end(), platform) - platforms.begin();
    cl_uint ndevices = 0;
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndevices);
    std::vector<cl_device_id> devices(ndevices);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ndevices, devices.data(), nullptr);
    const auto d = std::find(devices.begin(), devices.end(), device) - devices.begin();
    return "opencl:" + std::to_string(p) + ":" + std::to_string(d);
}

GpuSpec opencl_spec(int devid)
{
    cl_device_id device;
    starpu_opencl_get_device(devid, &device);
    GpuSpec spec;
    char name[128] = {};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    set_spec_name(spec, name);
    cl_uint units = 1;
    clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
    spec.sms = std::clamp<uint32_t>(units, 1, kMaxSms);
    cl_ulong local = 0;
    clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    spec.shared_mem_per_sm = static_cast<uint32_t>(std::min<cl_ulong>(local, UINT32_MAX));
    return spec;
}
#endif

#ifdef STARPU_USE_CUDA
std::string cuda_key(const struct cudaDeviceProp &prop)
{
    char key[32];
    std::snprintf(key, sizeof key, "cuda:%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    return key;
}

GpuSpec cuda_spec(const struct cudaDeviceProp &prop)
{
    GpuSpec spec;
    set_spec_name(spec, prop.name);
    spec.sms = std::clamp<uint32_t>(prop.multiProcessorCount, 1, kMaxSms);
    spec.warp_size = prop.warpSize > 0 ? prop.warpSize : 32;
    spec.max_warps_per_sm = std::max<uint32_t>(1, prop.maxThreadsPerMultiProcessor / spec.warp_size);
    spec.max_blocks_per_sm = std::max<uint32_t>(1, prop.maxBlocksPerMultiProcessor);
    spec.shared_mem_per_sm = static_cast<uint32_t>(prop.sharedMemPerMultiprocessor);
    return spec;
}
#endif

}  // namespace

std::vector<AcceleratorDevice> discover_accelerators(unsigned sched_ctx_id)
{
    std::map<unsigned, AcceleratorDevice> by_node;
    struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(sched_ctx_id);
    struct starpu_sched_ctx_iterator it;
    workers->init_iterator(workers, &it);
    while (workers->has_next(workers, &it)) {
        const int worker = static_cast<int>(workers->get_next(workers, &it));
        const enum starpu_worker_archtype type = starpu_worker_get_type(worker);
        if (type != STARPU_CUDA_WORKER && type != STARPU_OPENCL_WORKER)
            continue;
        const unsigned node = starpu_worker_get_memory_node(static_cast<unsigned>(worker));
        AcceleratorDevice &device = by_node[node];
        device.workers.push_back(worker);
        if (device.workers.size() > 1)
            continue;
        device.memory_node = node;
#ifdef STARPU_USE_CUDA
        if (type == STARPU_CUDA_WORKER) {
            const struct cudaDeviceProp *prop = starpu_cuda_get_device_properties(static_cast<unsigned>(worker));
            device.key = cuda_key(*prop);
            device.spec = cuda_spec(*prop);
            // Asked as an attribute: recent toolkits dropped cudaDeviceProp::computeMode.
            int mode = 0;
            device.exclusive_process =
                cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, starpu_worker_get_devid(worker)) == cudaSuccess &&
                mode == cudaComputeModeExclusiveProcess;
        }
#endif
#ifdef STARPU_USE_OPENCL
        if (type == STARPU_OPENCL_WORKER) {
            device.key = opencl_key(starpu_worker_get_devid(worker));
            device.spec = opencl_spec(starpu_worker_get_devid(worker));
        }
#endif
        if (device.key.empty()) {  // a worker type this build cannot query
            device.key = "node:" + std::to_string(node);
            device.spec.sms = 1;
        }
        device.spec.memory_bytes = node_capacity(node);
    }
    std::vector<AcceleratorDevice> result;
    for (auto &entry : by_node)
        result.push_back(std::move(entry.second));
    return result;
}

}  // namespace hetpu::mgb
