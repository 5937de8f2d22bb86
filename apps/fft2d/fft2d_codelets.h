// SPDX-License-Identifier: LGPL-2.1-or-later
// The StarPU codelet of fft2d: forward 1D FFTs of a block of rows, with implementations for
// every device kind hetpu was built with and a history-based performance model.
#pragma once

#include <starpu.h>

#include <cstdint>
#include <vector>

namespace hetpu::fft2d {

// Once, after hetpu_init() and before any task: FFTW plans for every row length the run
// uses (FFTW's planner is not thread-safe, its new-array execute is), clFFT's setup.
// Returns 0 or -errno (a message is printed).
int codelets_init(const std::vector<uint64_t> &lengths);

// Before hetpu_shutdown(): destroys the plans.
void codelets_shutdown();

struct starpu_codelet *codelet();

}  // namespace hetpu::fft2d
