// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of one fft2d repetition: two divisible jobs named "fft2d" (the hepopta
// policies read $HETPU_HOME/profiles/fft2d.csv for both). The row phase divides the M rows
// (FFTs of length N); the matrix is transposed on the host; the column phase divides its N
// rows (the former columns, FFTs of length M); a second transposition restores the layout.
#pragma once

#include <hetpu/divisible.h>

#include "apps/fft2d/fft2d_options.h"
#include "apps/fft2d/fft2d_problem.h"

namespace hetpu::fft2d {

// p.data becomes the 2D forward FFT of its value on entry. StarPU started by hetpu_init()
// and codelets_init({p.cols, p.rows}) called. The report adds the two phases up per worker;
// its makespan covers both phases and the transpositions. Returns 0 or -errno.
int run_once(Problem &p, const Options &options, struct hetpu_divisible_report *out);

// The row phase alone (row FFTs of length p.cols over the p.rows rows), as one divisible
// job named "fft2d": what `hetpu calibrate --app fft2d` measures.
int run_row_phase(Problem &p, const Options &options, struct hetpu_divisible_report *out);

}  // namespace hetpu::fft2d
