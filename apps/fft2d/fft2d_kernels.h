// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-device implementations behind the fft2d row codelet. One STARPU_VECTOR buffer
 * (STARPU_RW) holding `rows` consecutive rows of complex doubles, each of `length`
 * elements; cl_arg points to the row length (uint64_t). Each transforms every row in place
 * with a forward 1D FFT (sign -1, unnormalised, like FFTW_FORWARD). */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CPU, FFTW (fft2d_codelets.cpp): plans made once per length by codelets_init(). */
void hetpu_fft2d_cpu_rows(void *buffers[], void *arg);

/* OpenCL, clFFT (fft2d_opencl.cpp, built when HETPU_HAVE_CLFFT). */
void hetpu_fft2d_opencl_rows(void *buffers[], void *arg);
int hetpu_fft2d_opencl_setup(void);     /* clfftSetup, from the main thread */
void hetpu_fft2d_opencl_teardown(void); /* plans and clfftTeardown */

/* CUDA, cuFFT (fft2d_cuda.cu, registered when HETPU_HAVE_CUDA). */
void hetpu_fft2d_cuda_rows(void *buffers[], void *arg);
void hetpu_fft2d_cuda_teardown(void);
/* cuFFT Z2Z forward of `rows` rows of `length` on `stream`, in batches of cached plans
 * (fft2d_batches.h); returns the cufftResult. Always built by nvcc, so a toolkit change that breaks it is seen. */
int hetpu_fft2d_cufft_rows(void *data, int64_t length, int64_t rows, void *stream);
/* Makes the plans hetpu_fft2d_cufft_rows uses for rows of `length` on the current device
 * (every batch size of fft2d_batches.h), so that no block pays cuFFT's first planning;
 * returns the cufftResult. */
int hetpu_fft2d_cufft_prepare(int64_t length);
/* StarPU callback for starpu_execute_on_each_worker: prepares each length of the
 * 0-terminated uint64_t array `arg`. */
void hetpu_fft2d_cuda_prepare(void *arg);

#ifdef __cplusplus
}
#endif
