// SPDX-License-Identifier: LGPL-2.1-or-later
#include "config.h"

#include "hetpu/ckpt.h"

#include "ckpt_backend/core/ckpt_error.h"
#include "ckpt_backend/starpu_cache_arbiter.h"
#include "ckpt_backend/starpu_device_memory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>

namespace hetpu::ckpt {

namespace {

// Used when StarPU has no calibrated bandwidth for a link (bytes/s). Only the ratios matter
// to the peer schedule; equal defaults make it spread the remainder evenly.
constexpr double kFallbackBandwidth = 10e9;

#if defined(STARPU_USE_CUDA) && defined(HETPU_HAVE_CUDA)
#define HETPU_CKPT_CUDA 1
#endif

class StarpuDeviceMemory : public DeviceMemory {
public:
    StarpuDeviceMemory(const std::vector<unsigned> &nodes, std::uint64_t headroom)
        : nodes_(nodes), headroom_(headroom), arbiter_(CacheArbiter::open(nodes))
    {
        for (unsigned node : nodes_) {
            Device d;
            d.node = node;
            d.kind = starpu_node_get_kind(node);
            d.devid = starpu_memory_node_get_devid(node);
#ifdef STARPU_USE_OPENCL
            if (d.kind == STARPU_OPENCL_RAM) {
                cl_context ctx;
                cl_device_id dev;
                starpu_opencl_get_context(d.devid, &ctx);
                starpu_opencl_get_device(d.devid, &dev);
                cl_int err = CL_SUCCESS;
                // clCreateCommandQueue: OpenCL 1.2 drivers lack the 2.0 replacement.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
                d.queue = clCreateCommandQueue(ctx, dev, 0, &err);
#pragma GCC diagnostic pop
                if (err != CL_SUCCESS)
                    throw Error(-EIO, "cannot create an OpenCL queue for the device cache of memory node " +
                                          std::to_string(node) + " (OpenCL error " + std::to_string(err) + ")");
            }
#endif
#ifdef HETPU_CKPT_CUDA
            if (d.kind == STARPU_CUDA_RAM) {
                cudaSetDevice(d.devid);
                if (cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking) != cudaSuccess)
                    throw Error(-EIO, "cannot create a CUDA stream for memory node " + std::to_string(node));
            }
#endif
            devices_.push_back(d);
        }
    }
    ~StarpuDeviceMemory() override
    {
        for (Device &d : devices_) {
#ifdef STARPU_USE_OPENCL
            if (d.queue)
                clReleaseCommandQueue(d.queue);
#endif
#ifdef HETPU_CKPT_CUDA
            if (d.stream)
                cudaStreamDestroy(d.stream);
#endif
            (void)d;
        }
    }

    std::size_t device_count() const override { return devices_.size(); }
    std::uint64_t device_bytes(std::size_t d) const override
    {
        const starpu_ssize_t total = starpu_memory_get_total(devices_[d].node);
        return total > 0 ? static_cast<std::uint64_t>(total) : 0;
    }
    std::uintptr_t allocate(std::size_t d, std::uint64_t bytes) override
    {
        const unsigned node = devices_[d].node;
        // The headroom stays StarPU's: a chunk that would leave less is refused, like one
        // over the limit.
        if (starpu_memory_get_available(node) < static_cast<starpu_ssize_t>(bytes + headroom_))
            return 0;
        // STARPU_MALLOC_COUNT without STARPU_MEMORY_OVERFLOW: refused (0) over the limit.
        const std::uintptr_t chunk = starpu_malloc_on_node_flags(node, bytes, STARPU_MALLOC_COUNT);
        if (chunk != 0 && arbiter_ && !arbiter_->reserve(d, chunk, bytes)) {
            // The arbiter's view of the device (other processes' tasks) has no room for it.
            starpu_free_on_node_flags(node, chunk, bytes, STARPU_MALLOC_COUNT);
            return 0;
        }
        return chunk;
    }
    void release(std::size_t d, std::uintptr_t chunk, std::uint64_t bytes) override
    {
        starpu_free_on_node_flags(devices_[d].node, chunk, bytes, STARPU_MALLOC_COUNT);
        if (arbiter_)
            arbiter_->release(chunk);
    }
    // Per device: StarPU's free memory below the headroom (the application's data is growing
    // into it), or what the MGB arbiter's waiting tasks lack there (one read of its ledger).
    std::vector<std::uint64_t> pressure() override
    {
        std::vector<std::uint64_t> want(devices_.size(), 0);
        if (arbiter_)
            want = arbiter_->memory_wanted();
        want.resize(devices_.size(), 0);
        for (std::size_t d = 0; d < devices_.size(); ++d) {
            const starpu_ssize_t available = starpu_memory_get_available(devices_[d].node);
            if (available < static_cast<starpu_ssize_t>(headroom_))
                want[d] =
                    std::max(want[d], headroom_ - static_cast<std::uint64_t>(std::max<starpu_ssize_t>(available, 0)));
        }
        return want;
    }
    double bandwidth(std::size_t from, int to) const override
    {
        const unsigned dst = to == kHostMemory ? STARPU_MAIN_RAM : devices_[static_cast<std::size_t>(to)].node;
        // StarPU's bus calibration, in MB/s (bytes per microsecond).
        const double mbs = starpu_transfer_bandwidth(devices_[from].node, dst);
        return std::isfinite(mbs) && mbs > 0 ? mbs * 1e6 : kFallbackBandwidth;
    }
    void copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes) override;

private:
    struct Device {
        unsigned node = 0;
        enum starpu_node_kind kind = STARPU_CPU_RAM;
        int devid = 0;
#ifdef STARPU_USE_OPENCL
        cl_command_queue queue = nullptr;
#endif
#ifdef HETPU_CKPT_CUDA
        cudaStream_t stream = nullptr;
#endif
    };
    [[noreturn]] static void failed(const char *what, long code)
    {
        throw Error(-EIO, std::string("device cache copy failed: ") + what + " (error " + std::to_string(code) + ")");
    }
#ifdef STARPU_USE_OPENCL
    void opencl_copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes);
#endif
#ifdef HETPU_CKPT_CUDA
    void cuda_copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes);
#endif

    std::vector<unsigned> nodes_;
    std::uint64_t headroom_;
    std::unique_ptr<CacheArbiter> arbiter_;
    std::vector<Device> devices_;
};

void StarpuDeviceMemory::copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes)
{
    if (bytes == 0)
        return;
    const Device *any = src.device != kHostMemory   ? &devices_[static_cast<std::size_t>(src.device)]
                        : dst.device != kHostMemory ? &devices_[static_cast<std::size_t>(dst.device)]
                                                    : nullptr;
    if (!any) {
        std::memcpy(reinterpret_cast<char *>(dst.base) + dst.offset,
                    reinterpret_cast<const char *>(src.base) + src.offset, bytes);
        return;
    }
#ifdef STARPU_USE_OPENCL
    if (any->kind == STARPU_OPENCL_RAM)
        return opencl_copy(src, dst, bytes);
#endif
#ifdef HETPU_CKPT_CUDA
    if (any->kind == STARPU_CUDA_RAM)
        return cuda_copy(src, dst, bytes);
#endif
    throw Error(-ENOTSUP, "device cache: no copy routine for memory node " + std::to_string(any->node));
}

#ifdef STARPU_USE_OPENCL
// Every copy on the cache's own queue of the device involved (never on StarPU's queues:
// those belong to the driver threads), waited for before returning.
void StarpuDeviceMemory::opencl_copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes)
{
    cl_int err = CL_SUCCESS;
    if (src.device == kHostMemory) {
        const Device &d = devices_[static_cast<std::size_t>(dst.device)];
        err = clEnqueueWriteBuffer(d.queue, reinterpret_cast<cl_mem>(dst.base), CL_TRUE, dst.offset, bytes,
                                   reinterpret_cast<const char *>(src.base) + src.offset, 0, nullptr, nullptr);
        if (err != CL_SUCCESS)
            failed("clEnqueueWriteBuffer", err);
        return;
    }
    const Device &s = devices_[static_cast<std::size_t>(src.device)];
    if (dst.device == kHostMemory) {
        err = clEnqueueReadBuffer(s.queue, reinterpret_cast<cl_mem>(src.base), CL_TRUE, src.offset, bytes,
                                  reinterpret_cast<char *>(dst.base) + dst.offset, 0, nullptr, nullptr);
        if (err != CL_SUCCESS)
            failed("clEnqueueReadBuffer", err);
        return;
    }
    if (dst.device == src.device) {
        err = clEnqueueCopyBuffer(s.queue, reinterpret_cast<cl_mem>(src.base), reinterpret_cast<cl_mem>(dst.base),
                                  src.offset, dst.offset, bytes, 0, nullptr, nullptr);
        if (err == CL_SUCCESS)
            err = clFinish(s.queue);
        if (err != CL_SUCCESS)
            failed("clEnqueueCopyBuffer", err);
        return;
    }
    // Between two devices: StarPU 1.3 gives each OpenCL device its own context, and a buffer
    // of one context cannot be copied into another's, so the bytes pass through host memory.
    std::unique_ptr<char[]> staging(new char[bytes]);
    opencl_copy(src, {kHostMemory, reinterpret_cast<std::uintptr_t>(staging.get()), 0}, bytes);
    opencl_copy({kHostMemory, reinterpret_cast<std::uintptr_t>(staging.get()), 0}, dst, bytes);
}
#endif

#ifdef HETPU_CKPT_CUDA
// Device pointers with offsets; cudaMemcpyDefault lets unified addressing pick the direction,
// a peer copy goes directly over NVLink/PCIe where the devices allow it.
void StarpuDeviceMemory::cuda_copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes)
{
    const Device &d = devices_[static_cast<std::size_t>(src.device != kHostMemory ? src.device : dst.device)];
    char *to = reinterpret_cast<char *>(dst.base) + dst.offset;
    const char *from = reinterpret_cast<const char *>(src.base) + src.offset;
    cudaSetDevice(d.devid);
    cudaError_t err;
    if (src.device != kHostMemory && dst.device != kHostMemory && src.device != dst.device)
        err = cudaMemcpyPeerAsync(to, devices_[static_cast<std::size_t>(dst.device)].devid, from, d.devid, bytes,
                                  d.stream);
    else
        err = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, d.stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(d.stream);
    if (err != cudaSuccess)
        failed(cudaGetErrorString(err), static_cast<long>(err));
}
#endif

bool cache_capable(enum starpu_node_kind kind)
{
#ifdef STARPU_USE_OPENCL
    if (kind == STARPU_OPENCL_RAM)
        return true;
#endif
#ifdef HETPU_CKPT_CUDA
    if (kind == STARPU_CUDA_RAM)
        return true;
#endif
    (void)kind;
    return false;
}

}  // namespace

std::size_t contiguous_size(starpu_data_handle_t h)
{
    switch (starpu_data_get_interface_id(h)) {
    case STARPU_VECTOR_INTERFACE_ID:
    case STARPU_VARIABLE_INTERFACE_ID: return starpu_data_get_size(h);
    case STARPU_MATRIX_INTERFACE_ID:
        return starpu_matrix_get_local_ld(h) == starpu_matrix_get_nx(h) ? starpu_data_get_size(h) : 0;
    default: return 0;
    }
}

void device_buffer(starpu_data_handle_t h, unsigned node, std::uintptr_t *base, std::uint64_t *offset)
{
    void *iface = starpu_data_get_interface_on_node(h, node);
    switch (starpu_data_get_interface_id(h)) {
    case STARPU_VECTOR_INTERFACE_ID:
        *base = static_cast<starpu_vector_interface *>(iface)->dev_handle;
        *offset = static_cast<starpu_vector_interface *>(iface)->offset;
        break;
    case STARPU_VARIABLE_INTERFACE_ID:
        *base = static_cast<starpu_variable_interface *>(iface)->dev_handle;
        *offset = static_cast<starpu_variable_interface *>(iface)->offset;
        break;
    default:
        *base = static_cast<starpu_matrix_interface *>(iface)->dev_handle;
        *offset = static_cast<starpu_matrix_interface *>(iface)->offset;
        break;
    }
}

std::unique_ptr<DeviceMemory> make_starpu_device_memory(std::vector<unsigned> *nodes, std::uint64_t headroom)
{
    nodes->clear();
    for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node)
        if (cache_capable(starpu_node_get_kind(node)))
            nodes->push_back(node);
    if (nodes->empty())
        return nullptr;
    auto devices = std::make_unique<StarpuDeviceMemory>(*nodes, headroom);
    // The cache takes only chunks that leave the headroom free: a headroom as large as the
    // device would leave it no memory at all, with nothing to say why.
    for (std::size_t d = 0; d < nodes->size(); ++d) {
        const std::uint64_t total = devices->device_bytes(d);
        if (total > 0 && headroom >= total)
            throw Error(-EINVAL, "[device] headroom (" + std::to_string(headroom) +
                                     " bytes) is not below the memory of StarPU memory node " +
                                     std::to_string((*nodes)[d]) + " (" + std::to_string(total) +
                                     " bytes): the device cache would get no memory there; set headroom below the "
                                     "device's memory, or leave it out (default: one chunk)");
    }
    return devices;
}

}  // namespace hetpu::ckpt
