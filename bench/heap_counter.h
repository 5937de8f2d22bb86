// SPDX-License-Identifier: LGPL-2.1-or-later
// Peak heap bytes of one call, for the benchmarks' memory columns: replaces the global
// operator new and delete with counting ones (requested sizes; a size header in front of each
// block lets delete subtract what it frees). Include it in exactly one translation unit of a
// program: it defines the replacement operators.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace hetpu::bench {

inline std::atomic<std::size_t> heap_live{0}, heap_peak{0};

inline void *counted_alloc(std::size_t size)
{
    void *raw = std::malloc(size + 16);
    if (!raw)
        throw std::bad_alloc();
    *static_cast<std::size_t *>(raw) = size;
    const std::size_t now = heap_live += size;
    std::size_t peak = heap_peak.load();
    while (now > peak && !heap_peak.compare_exchange_weak(peak, now)) {
    }
    return static_cast<char *>(raw) + 16;
}

inline void counted_free(void *p)
{
    if (!p)
        return;
    char *raw = static_cast<char *>(p) - 16;
    heap_live -= *reinterpret_cast<std::size_t *>(raw);
    std::free(raw);
}

// Starts a measurement: returns the bytes live now, and the peak restarts from them.
inline std::size_t heap_mark()
{
    const std::size_t base = heap_live.load();
    heap_peak = base;
    return base;
}

// The most bytes allocated at once since heap_mark() returned `base`, beyond `base`.
inline std::size_t heap_peak_since(std::size_t base) { return heap_peak.load() - base; }

}  // namespace hetpu::bench

void *operator new(std::size_t size) { return hetpu::bench::counted_alloc(size); }
void *operator new[](std::size_t size) { return hetpu::bench::counted_alloc(size); }
void operator delete(void *p) noexcept { hetpu::bench::counted_free(p); }
void operator delete[](void *p) noexcept { hetpu::bench::counted_free(p); }
void operator delete(void *p, std::size_t) noexcept { hetpu::bench::counted_free(p); }
void operator delete[](void *p, std::size_t) noexcept { hetpu::bench::counted_free(p); }
