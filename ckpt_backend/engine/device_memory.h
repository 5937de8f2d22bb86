// SPDX-License-Identifier: LGPL-2.1-or-later
// What the engine needs from the node's accelerators for the device cache tier, and nothing
// more: allocate and free cache chunks, copy bytes between device buffers and host memory,
// and the bandwidth of each link. The StarPU glue implements it over StarPU's memory nodes
// (OpenCL and CUDA); tests implement it over host memory to check what the engine asks for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu::ckpt {

constexpr int kHostMemory = -1;

// A byte position: on device `device` (base is the driver's buffer handle: a cl_mem or a
// CUDA device pointer), or in host memory when device == kHostMemory (base is the pointer).
struct DeviceAddress {
    int device;
    std::uintptr_t base;
    std::uint64_t offset;
};

class DeviceMemory {
public:
    virtual ~DeviceMemory() = default;
    virtual std::size_t device_count() const = 0;
    // Memory of the device as its runtime reports it (for fractional cache sizes).
    virtual std::uint64_t device_bytes(std::size_t device) const = 0;
    // A chunk of the device cache; 0 when the device refuses it (full, or over its limit).
    virtual std::uintptr_t allocate(std::size_t device, std::uint64_t bytes) = 0;
    virtual void release(std::size_t device, std::uintptr_t chunk, std::uint64_t bytes) = 0;
    // Synchronous copy (returns when dst holds the bytes); throws ckpt::Error on failure.
    virtual void copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes) = 0;
    // Bytes/s from device `from` to device `to` (to == kHostMemory: to the host).
    virtual double bandwidth(std::size_t from, int to) const = 0;
    // Bytes of cache memory each device wants back now (device memory pressure: its runtime
    // is short of room, or the node's scheduler has tasks waiting for memory); empty or 0:
    // none. Polled by the engine, which gives back whole chunks holding nothing unflushed.
    virtual std::vector<std::uint64_t> pressure() { return {}; }
};

}  // namespace hetpu::ckpt
