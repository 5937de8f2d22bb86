/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hetpu checkpoint backend: asynchronous multi-tier checkpoints of StarPU data.
 *
 * The application protects its data handles (or plain host buffers), then checkpoints them
 * under a name and a version number. A checkpoint is captured through StarPU (a read
 * acquisition on each protected handle, ordered with the tasks already submitted), copied
 * into the host cache, and flushed in the background to the local and remote directory
 * tiers, where each complete version is crash-consistent (checksummed manifest written after
 * its data). Restores read from the fastest tier holding the data; restore hints let the
 * backend keep and prefetch what will be read next.
 *
 * Every function returns 0 or -errno; hetpu_ckpt_last_error() gives the message of the last
 * failure in the calling thread. Call from application threads, never from a StarPU task or
 * callback. See ckpt_backend/README.md for the configuration keys and an example.
 */
#ifndef HETPU_CKPT_H
#define HETPU_CKPT_H

#include <stddef.h>
#include <stdint.h>
/* StarPU 1.3's starpu_disk.h lacks extern "C" and starpu.h includes it outside its own
 * extern "C" block: including it here first (wrapped) gives C++ users of this header working
 * starpu_disk_* declarations. Include this header before starpu.h for that to take effect. */
#ifdef __cplusplus
extern "C" {
#endif
#include <starpu_disk.h>
#ifdef __cplusplus
}
#endif
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hetpu_ckpt_tier {
    HETPU_CKPT_TIER_DEVICE = -1, /* captured in a device cache (or the host cache) */
    HETPU_CKPT_TIER_HOST = 0,    /* captured in the host cache */
    HETPU_CKPT_TIER_LOCAL = 1,   /* complete and durable in the node-local directory */
    HETPU_CKPT_TIER_REMOTE = 2   /* complete and durable in the remote directory */
};

/* Starts the backend from a TOML file (hetpu_ckpt_init) or TOML text. StarPU must be running
 * before handles are protected. -EALREADY when already initialised. */
int hetpu_ckpt_init(const char *config_path);
int hetpu_ckpt_init_from_string(const char *toml_text);

/* Protects a registered handle (vector, variable, or matrix without padding) under a region
 * name (letters, digits, '_', '-', '.'). Every checkpoint captures all protected regions. */
int hetpu_ckpt_protect(const char *region, starpu_data_handle_t handle);
/* Protects a plain host buffer (captured synchronously by hetpu_ckpt_checkpoint). */
int hetpu_ckpt_protect_buffer(const char *region, void *ptr, size_t size);
int hetpu_ckpt_unprotect(const char *region);

/* Takes version `version` of checkpoint `name` (a new number each time). Returns once the
 * captures are submitted: later tasks writing a protected handle wait only for its copy into
 * the cache, not for the disk. */
int hetpu_ckpt_checkpoint(const char *name, int64_t version);
/* Blocks until the version is complete on `tier` (DEVICE: captured, in device caches for
 * device-resident handles, in the host cache for the others). */
int hetpu_ckpt_wait(const char *name, int64_t version, enum hetpu_ckpt_tier tier);
/* Writes the version back into the protected regions (matched by region name; sizes must
 * agree), through a StarPU write acquisition. Verifies checksums of data read from disk. On
 * error the regions' contents are unspecified: restore another version. */
int hetpu_ckpt_restore(const char *name, int64_t version);
/* The order in which versions of `name` will be restored (replaces earlier hints). */
int hetpu_ckpt_prefetch_hint(const char *name, const int64_t *versions, size_t count);
/* Newest version restorable now, also after a crash (-ENOENT when there is none). */
int hetpu_ckpt_latest(const char *name, int64_t *version);
/* Waits for every capture and flush, then stops the backend (call before starpu_shutdown). */
int hetpu_ckpt_finalize(void);

const char *hetpu_ckpt_last_error(void);

/* Counters of the backend since hetpu_ckpt_init (bytes unless said otherwise). */
struct hetpu_ckpt_stats {
    uint64_t captured_bytes;                  /* into the host tier (host cache or written through) */
    uint64_t written_through_bytes;           /* of which written straight to the local directory */
    uint64_t host_path_captures;              /* protected handles captured from main memory */
    uint64_t device_path_captures;            /* protected handles captured from device memory */
    uint64_t device_local_bytes;              /* device-resident data copied into its own device's cache */
    uint64_t device_peer_bytes;               /* ... into a peer device's cache (peer schedule) */
    uint64_t device_to_host_at_capture_bytes; /* ... to the host before the application resumed */
    uint64_t device_flushed_bytes;            /* device cache -> host tier, in the background */
    uint64_t device_evicted_bytes;
    uint64_t restored_from_device_bytes, restored_from_host_bytes, restored_from_disk_bytes;
    uint64_t restored_into_device_bytes;     /* restores written straight into device memory */
    uint64_t prefetched_bytes;               /* hinted versions read back into the host cache */
    uint64_t device_prefetched_bytes;        /* ... into a device cache */
    uint64_t peer_schedules;                 /* group checkpoints that needed the peer schedule */
    double peer_schedule_time_s;             /* bottleneck time of the last schedule */
    double device_capture_copy_s;            /* seconds group captures spent copying, in total */
    uint64_t device_cache_bytes;             /* device cache memory allocated so far, all devices */
    uint64_t device_count;                   /* devices with a cache tier */
    uint64_t device_chunk_refusals;          /* chunks a device refused as the cache first grew (over its limit) */
    int device_caches_growing;               /* 1 while cache chunks are still being allocated */
    uint64_t device_pressure_released_bytes; /* cache memory given back under device memory pressure */
    uint64_t device_pressure_evicted_bytes;  /* flushed device copies dropped to give it back */
    uint64_t device_regrown_bytes;           /* cache memory taken again once the device was quiet */
};
/* Fills *stats (waits for submitted captures first). */
int hetpu_ckpt_get_stats(struct hetpu_ckpt_stats *stats);

/* A disk tier directory offered to StarPU as an out-of-core memory node (one file per
 * allocation, removed when StarPU frees it). size: bytes StarPU may use there (at least
 * 16 MiB), negative for unlimited. Returns the memory node number or -errno. Usable without
 * hetpu_ckpt_init; call after starpu_init. */
int hetpu_ckpt_register_disk_node(const char *directory, int64_t size);
extern struct starpu_disk_ops hetpu_ckpt_disk_ops;

#ifdef __cplusplus
}
#endif

#endif /* HETPU_CKPT_H */
