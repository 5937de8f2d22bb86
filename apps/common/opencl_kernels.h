// SPDX-License-Identifier: LGPL-2.1-or-later
// An app's own OpenCL kernels (grn, kmeans; matmul and fft2d call libraries): one program
// built from source on every OpenCL device when the codelets are set up, and the calls
// that set a kernel's arguments in order. StarPU glue, header-only; include it only where
// HETPU_HAVE_OPENCL is defined.
#pragma once

#include <starpu.h>

#include <cerrno>

namespace hetpu::apps {

class OpenclKernels {
public:
    // Builds `source` for every OpenCL device, once (nothing to build without a device).
    // Returns 0 or a negative errno.
    int load(const char *source)
    {
        if (loaded_ || starpu_opencl_worker_get_count() == 0)
            return 0;
        const int rc = starpu_opencl_load_opencl_from_string(source, &program_, nullptr);
        if (rc != 0)
            return rc < 0 ? rc : -EIO;
        loaded_ = true;
        return 0;
    }

    void unload()
    {
        if (loaded_)
            starpu_opencl_unload_opencl(&program_);
        loaded_ = false;
    }

    // The kernel `name` and the queue of the calling worker's device.
    cl_kernel kernel(const char *name, cl_command_queue &queue)
    {
        cl_kernel k;
        check(starpu_opencl_load_kernel(&k, &queue, &program_, name, starpu_worker_get_devid(starpu_worker_get_id())));
        return k;
    }

    // A failed OpenCL call inside a codelet cannot be returned: StarPU reports and aborts.
    static void check(cl_int err)
    {
        if (err != CL_SUCCESS)
            STARPU_OPENCL_REPORT_ERROR(err);
    }

private:
    struct starpu_opencl_program program_;
    bool loaded_ = false;
};

// Sets the kernel's arguments 0, 1, ... to `args` (each passed by size and address).
template <typename... Args> void set_kernel_args(cl_kernel kernel, const Args &...args)
{
    cl_uint n = 0;
    (OpenclKernels::check(clSetKernelArg(kernel, n++, sizeof args, &args)), ...);
}

}  // namespace hetpu::apps
