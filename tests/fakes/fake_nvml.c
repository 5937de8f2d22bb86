/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A stand-in for libnvidia-ml.so.1 so the NVML source is tested on machines without a GPU.
 * Two GPUs. FAKE_NVML_MODE=counter (default): each GPU's energy counter starts at 5000 mJ and
 * rises 1000 mJ per read. FAKE_NVML_MODE=power: no energy counter, constant 250 W draw.
 * FAKE_NVML_MODE=clock: the counters follow CLOCK_MONOTONIC, GPU 0 at FAKE_NVML_WATTS (default
 * 100 W) and GPU 1 at twice that, the same in every process of the node (the shared-device
 * tests compare processes' shares with what the device drew between two instants). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int reads[2];
static int handles[2] = {0, 1};

static int power_mode(void)
{
    const char *m = getenv("FAKE_NVML_MODE");
    return m && !strcmp(m, "power");
}

int nvmlInit_v2(void)
{
    reads[0] = reads[1] = 0;
    return 0;
}
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { return r == 3 ? "Not Supported" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = 2;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
    if (i > 1)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *h = &handles[i];
    return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj)
{
    if (power_mode())
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    int i = *(int *)h;
    const char *m = getenv("FAKE_NVML_MODE");
    if (m && !strcmp(m, "clock")) {
        const char *w = getenv("FAKE_NVML_WATTS");
        const double watts = (w && *w ? atof(w) : 100.0) * (i + 1);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        *mj = 5000ULL + (unsigned long long)(watts * 1e3 * ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9));
        /* FAKE_NVML_LOG=file: one line per read, "pid gpu mJ", so a test knows the interval
         * each process measured. */
        const char *log = getenv("FAKE_NVML_LOG");
        if (log && *log) {
            FILE *f = fopen(log, "a");
            if (f) {
                fprintf(f, "%ld %d %llu\n", (long)getpid(), i, *mj);
                fclose(f);
            }
        }
        return 0;
    }
    *mj = 5000ULL + 1000ULL * (unsigned long long)reads[i]++;
    return 0;
}

int nvmlDeviceGetPowerUsage(void *h, unsigned *mw)
{
    (void)h;
    *mw = 250000;
    return 0;
}
