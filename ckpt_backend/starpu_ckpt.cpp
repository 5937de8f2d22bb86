// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue for the checkpoint engine: protected handles are captured by read
// acquisitions (starpu_data_acquire_cb, so the capture is ordered after the tasks already
// submitted and before later writers) and restored by write acquisitions. The acquisition
// callback only queues the capture; a capture thread does the copy and releases the handle,
// so no StarPU thread ever waits for the cache.
#include "hetpu/ckpt.h"

#include "ckpt_backend/engine/engine.h"
#include "ckpt_backend/starpu_device_memory.h"

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using hetpu::ckpt::Engine;
using hetpu::ckpt::RegionSpec;

struct Protected {
    std::string region;
    starpu_data_handle_t handle = nullptr;  // null: plain buffer
    void *ptr = nullptr;
    size_t size = 0;
};

// The device-tier captures of one checkpoint: placed together once every handle of the
// version is acquired (the peer schedule needs the whole group).
struct GroupCapture {
    std::string name;
    int64_t version;
    size_t outstanding = 0;  // jobs not yet acquired
    std::vector<hetpu::ckpt::DeviceSource> sources;
    std::vector<starpu_data_handle_t> held;  // acquired device-resident handles
};

struct CaptureJob {
    std::string name;
    int64_t version;
    size_t index;
    starpu_data_handle_t handle;          // null: a marker that closes `group` (submission failed)
    std::shared_ptr<GroupCapture> group;  // null: host path (no device tier)
};

struct Backend {
    std::unique_ptr<Engine> engine;
    std::vector<Protected> regions;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<CaptureJob *> ready;  // acquired, waiting for the copy
    size_t pending = 0;              // submitted, not yet copied
    int capture_error = 0;
    std::string capture_error_message;
    bool stopping = false;
    std::thread capture_thread;
    std::map<unsigned, size_t> device_of_node;  // memory node -> engine device index
    uint64_t host_path_captures = 0, device_path_captures = 0;
};

std::mutex g_mu;  // serialises init/finalize/protect against each other
std::unique_ptr<Backend> g;
thread_local std::string t_error;

int fail(int rc, const std::string &msg)
{
    t_error = msg;
    return rc;
}

// What every call on a named checkpoint checks first: 0, or the failure to return.
int check_named_call(const char *name)
{
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!name)
        return fail(-EINVAL, "checkpoint name is NULL");
    return 0;
}

void on_acquired(void *arg)
{
    // Runs in a StarPU thread: queue and return.
    Backend *b = g.get();
    std::lock_guard<std::mutex> lock(b->mu);
    b->ready.push_back(static_cast<CaptureJob *>(arg));
    b->cv.notify_all();
}

// Where a device-tier job's valid copy is: main memory (0), or a device (1, with *source).
// With STARPU_ACQUIRE_NO_NODE_LOCK_ALL the replicates can neither change nor be evicted.
int locate(Backend *b, const CaptureJob &job, hetpu::ckpt::DeviceSource *source)
{
    if (starpu_data_is_on_node(job.handle, STARPU_MAIN_RAM))
        return 0;
    for (const auto &[node, device] : b->device_of_node) {
        if (!starpu_data_is_on_node(job.handle, node))
            continue;
        source->index = job.index;
        source->device = device;
        hetpu::ckpt::device_buffer(job.handle, node, &source->base, &source->offset);
        return 1;
    }
    return -1;
}

// Releases an acquisition on the node it was made on (LOCK_ALL holds every node).
void release(const CaptureJob &job, starpu_data_handle_t h)
{
    if (job.group)
        starpu_data_release_on_node(h, STARPU_ACQUIRE_NO_NODE_LOCK_ALL);
    else
        starpu_data_release(h);
}

void capture_loop(Backend *b)
{
    std::unique_lock<std::mutex> lock(b->mu);
    for (;;) {
        b->cv.wait(lock, [&] { return b->stopping || !b->ready.empty(); });
        if (b->ready.empty())
            return;
        std::unique_ptr<CaptureJob> job(b->ready.front());
        b->ready.pop_front();
        lock.unlock();
        int rc = 0;
        std::string msg;
        size_t released = 0;
        bool holding = false;  // a device-resident handle kept acquired until its group is copied
        try {
            if (!job->group) {
                const void *src = starpu_data_handle_to_pointer(job->handle, STARPU_MAIN_RAM);
                b->engine->capture(job->name, job->version, job->index, src);
            } else if (job->handle) {
                hetpu::ckpt::DeviceSource source{};
                const int where = locate(b, *job, &source);
                if (where == 0) {
                    const void *src = starpu_data_handle_to_pointer(job->handle, STARPU_MAIN_RAM);
                    b->engine->capture(job->name, job->version, job->index, src);
                } else if (where < 0) {
                    throw hetpu::ckpt::Error(-EIO, "checkpoint '" + job->name + "': region " +
                                                       std::to_string(job->index) +
                                                       " has no valid copy in main memory or on a device");
                }
                std::lock_guard<std::mutex> l(b->mu);
                holding = where == 1;
                if (where == 1) {
                    job->group->sources.push_back(source);
                    job->group->held.push_back(job->handle);
                    ++b->device_path_captures;
                } else {
                    ++b->host_path_captures;
                }
            }
        } catch (const hetpu::ckpt::Error &e) {
            rc = e.code();
            msg = e.what();
        } catch (const std::exception &e) {
            rc = -EIO;  // this thread has no caller to throw to: hetpu_ckpt_wait reports it
            msg = e.what();
        }
        if (job->handle && !holding) {
            release(*job, job->handle);
            released = 1;
        }
        if (job->group) {
            GroupCapture &g = *job->group;
            bool complete;
            {
                std::lock_guard<std::mutex> l(b->mu);
                complete = --g.outstanding == 0;
            }
            if (complete) {
                // Every handle of the version is acquired: place and copy the device-resident
                // ones as one group, then let the tasks waiting on them go.
                try {
                    if (!g.sources.empty())
                        b->engine->capture_from_devices(g.name, g.version, g.sources);
                } catch (const hetpu::ckpt::Error &e) {
                    if (!rc) {
                        rc = e.code();
                        msg = e.what();
                    }
                }
                for (starpu_data_handle_t h : g.held)
                    release(*job, h);
                released += g.held.size();
            }
        }
        lock.lock();
        if (rc && !b->capture_error) {
            b->capture_error = rc;
            b->capture_error_message = msg;
        }
        if (!job->group)
            --b->pending;
        else
            b->pending -= released;
        b->cv.notify_all();
    }
}

// Waits until every submitted capture is copied; returns the first capture error.
int wait_captures(Backend *b)
{
    std::unique_lock<std::mutex> lock(b->mu);
    b->cv.wait(lock, [&] { return b->pending == 0; });
    if (b->capture_error) {
        int rc = b->capture_error;
        std::string msg = b->capture_error_message;
        b->capture_error = 0;
        return fail(rc, msg);
    }
    return 0;
}

int init_with(const hetpu::ckpt::EngineConfig &config)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g)
        return fail(-EALREADY, "hetpu_ckpt is already initialised (call hetpu_ckpt_finalize first)");
    auto b = std::make_unique<Backend>();
    std::unique_ptr<hetpu::ckpt::DeviceMemory> devices;
    if (config.device.enabled()) {
        std::vector<unsigned> nodes;
        devices = hetpu::ckpt::make_starpu_device_memory(&nodes, config.device.headroom_bytes);
        for (size_t i = 0; i < nodes.size(); ++i)
            b->device_of_node[nodes[i]] = i;
    }
    b->engine = Engine::create(config, std::move(devices));
    if (!b->engine->device_tier())
        b->device_of_node.clear();
    try {
        b->capture_thread = std::thread(capture_loop, b.get());
    } catch (const std::exception &e) {
        return fail(-EAGAIN, std::string("cannot start the capture thread: ") + e.what());
    }
    g = std::move(b);
    return 0;
}

const Protected *find_region(const std::string &region)
{
    for (const Protected &p : g->regions)
        if (p.region == region)
            return &p;
    return nullptr;
}

#define HETPU_CKPT_GUARD_BEGIN try {
#define HETPU_CKPT_GUARD_END                                                                                           \
    }                                                                                                                  \
    catch (const hetpu::ckpt::Error &e) { return fail(e.code(), e.what()); }                                           \
    catch (const std::bad_alloc &) { return fail(-ENOMEM, "out of memory"); }                                          \
    catch (const std::exception &e) { return fail(-EIO, e.what()); }                                                   \
    catch (...) { return fail(-EIO, "unknown error"); }

}  // namespace

extern "C" {

int hetpu_ckpt_init(const char *config_path)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!config_path)
        return fail(-EINVAL, "hetpu_ckpt_init: config path is NULL");
    return init_with(hetpu::ckpt::load_config_file(config_path));
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_init_from_string(const char *toml_text)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!toml_text)
        return fail(-EINVAL, "hetpu_ckpt_init_from_string: text is NULL");
    return init_with(hetpu::ckpt::parse_config(toml_text, "<config string>"));
    HETPU_CKPT_GUARD_END
}

static int protect(const char *region, starpu_data_handle_t handle, void *ptr, size_t size)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised (call hetpu_ckpt_init)");
    if (!region)
        return fail(-EINVAL, "region name is NULL");
    hetpu::ckpt::check_name(region, "region name");
    if (find_region(region))
        return fail(-EEXIST, std::string("region '") + region + "' is already protected");
    g->regions.push_back({region, handle, ptr, size});
    return 0;
}

int hetpu_ckpt_protect(const char *region, starpu_data_handle_t handle)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!handle)
        return fail(-EINVAL, "hetpu_ckpt_protect: handle is NULL");
    if (hetpu::ckpt::contiguous_size(handle) == 0)
        return fail(-ENOTSUP, std::string("hetpu_ckpt_protect '") + (region ? region : "?") +
                                  "': only vector, variable and unpadded matrix handles can be protected");
    return protect(region, handle, nullptr, 0);
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_protect_buffer(const char *region, void *ptr, size_t size)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!ptr && size)
        return fail(-EINVAL, "hetpu_ckpt_protect_buffer: NULL buffer");
    return protect(region, nullptr, ptr, size);
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_unprotect(const char *region)
{
    HETPU_CKPT_GUARD_BEGIN
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    for (auto it = g->regions.begin(); it != g->regions.end(); ++it)
        if (region && it->region == region) {
            g->regions.erase(it);
            return 0;
        }
    return fail(-ENOENT, std::string("region '") + (region ? region : "(null)") + "' is not protected");
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_checkpoint(const char *name, int64_t version)
{
    HETPU_CKPT_GUARD_BEGIN
    std::lock_guard<std::mutex> lock(g_mu);
    if (const int rc = check_named_call(name))
        return rc;
    std::vector<RegionSpec> specs;
    for (const Protected &p : g->regions)
        specs.push_back({p.region, p.handle ? hetpu::ckpt::contiguous_size(p.handle) : p.size});
    g->engine->begin(name, version, specs);
    std::shared_ptr<GroupCapture> group;
    if (g->engine->device_tier()) {
        group = std::make_shared<GroupCapture>();
        group->name = name;
        group->version = version;
        for (const Protected &p : g->regions)
            group->outstanding += p.handle ? 1 : 0;
    }
    for (size_t i = 0; i < g->regions.size(); ++i) {
        const Protected &p = g->regions[i];
        if (!p.handle) {
            g->engine->capture(name, version, i, p.ptr);
            continue;
        }
        auto *job = new CaptureJob{name, version, i, p.handle, group};
        {
            std::lock_guard<std::mutex> l(g->mu);
            ++g->pending;
        }
        // Device tier: only the ordering, no fetch into main memory (the capture copies from
        // wherever the valid copy is); LOCK_ALL keeps StarPU from evicting it meanwhile.
        const int rc = group ? starpu_data_acquire_on_node_cb(p.handle, STARPU_ACQUIRE_NO_NODE_LOCK_ALL, STARPU_R,
                                                              on_acquired, job)
                             : starpu_data_acquire_cb(p.handle, STARPU_R, on_acquired, job);
        if (rc) {
            delete job;
            {
                std::lock_guard<std::mutex> l(g->mu);
                --g->pending;
            }
            if (group) {
                // Close the group with the handles already submitted: a marker job stands for
                // the ones that will never be acquired.
                size_t never = 0;
                for (size_t k = i; k < g->regions.size(); ++k)
                    never += g->regions[k].handle ? 1 : 0;
                std::lock_guard<std::mutex> l(g->mu);
                group->outstanding -= never - 1;
                g->ready.push_back(new CaptureJob{name, version, i, nullptr, group});
                g->cv.notify_all();
            }
            return fail(rc < 0 ? rc : -EIO, "starpu_data_acquire_cb failed on region '" + p.region + "'");
        }
    }
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_wait(const char *name, int64_t version, enum hetpu_ckpt_tier tier)
{
    HETPU_CKPT_GUARD_BEGIN
    if (const int rc = check_named_call(name))
        return rc;
    if (tier < HETPU_CKPT_TIER_DEVICE || tier > HETPU_CKPT_TIER_REMOTE)
        return fail(-EINVAL, "unknown tier");
    int rc = wait_captures(g.get());
    if (rc)
        return rc;
    g->engine->wait(name, version, static_cast<hetpu::ckpt::Tier::Level>(tier));
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_restore(const char *name, int64_t version)
{
    HETPU_CKPT_GUARD_BEGIN
    std::lock_guard<std::mutex> lock(g_mu);
    if (const int rc = check_named_call(name))
        return rc;
    int rc = wait_captures(g.get());
    if (rc)
        return rc;
    const std::vector<RegionSpec> stored = g->engine->describe(name, version);
    // Check every protected region first, so a mismatch changes nothing.
    std::vector<size_t> index_of(g->regions.size());
    for (size_t i = 0; i < g->regions.size(); ++i) {
        const Protected &p = g->regions[i];
        size_t k = 0;
        while (k < stored.size() && stored[k].name != p.region)
            ++k;
        if (k == stored.size())
            return fail(-ENOENT,
                        "version " + std::to_string(version) + " of '" + name + "' has no region '" + p.region + "'");
        const size_t size = p.handle ? hetpu::ckpt::contiguous_size(p.handle) : p.size;
        if (stored[k].size != size)
            return fail(-EINVAL, "region '" + p.region + "' is " + std::to_string(size) + " bytes, version " +
                                     std::to_string(version) + " holds " + std::to_string(stored[k].size));
        index_of[i] = k;
    }
    for (size_t i = 0; i < g->regions.size(); ++i) {
        const Protected &p = g->regions[i];
        // Device tier: a handle whose current copy lives on one device is restored there,
        // straight into device memory (from the device cache when it holds the version), so
        // the next task on that device needs no transfer.
        if (p.handle && !g->device_of_node.empty()) {
            int node = -1;
            size_t device = 0;
            if (!starpu_data_is_on_node(p.handle, STARPU_MAIN_RAM))
                for (const auto &[n, d] : g->device_of_node)
                    if (starpu_data_is_on_node(p.handle, n)) {
                        node = static_cast<int>(n);
                        device = d;
                        break;
                    }
            if (node >= 0) {
                rc = starpu_data_acquire_on_node(p.handle, node, STARPU_W);
                if (rc)
                    return fail(rc < 0 ? rc : -EIO,
                                "starpu_data_acquire_on_node(W) failed on region '" + p.region + "'");
                hetpu::ckpt::DeviceSource where{};
                try {
                    hetpu::ckpt::device_buffer(p.handle, static_cast<unsigned>(node), &where.base, &where.offset);
                    g->engine->restore_to_device(name, version, index_of[i],
                                                 {static_cast<int>(device), where.base, where.offset},
                                                 stored[index_of[i]].size);
                } catch (...) {
                    starpu_data_release_on_node(p.handle, node);
                    throw;
                }
                starpu_data_release_on_node(p.handle, node);
                continue;
            }
        }
        void *dst = p.ptr;
        if (p.handle) {
            rc = starpu_data_acquire(p.handle, STARPU_W);
            if (rc)
                return fail(rc < 0 ? rc : -EIO, "starpu_data_acquire(W) failed on region '" + p.region + "'");
            dst = starpu_data_handle_to_pointer(p.handle, STARPU_MAIN_RAM);
        }
        try {
            g->engine->restore(name, version, index_of[i], dst, stored[index_of[i]].size);
        } catch (...) {
            if (p.handle)
                starpu_data_release(p.handle);
            throw;
        }
        if (p.handle)
            starpu_data_release(p.handle);
    }
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_prefetch_hint(const char *name, const int64_t *versions, size_t count)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!name || (!versions && count))
        return fail(-EINVAL, "hetpu_ckpt_prefetch_hint: NULL argument");
    g->engine->prefetch_hint(name, std::vector<int64_t>(versions, versions + count));
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_latest(const char *name, int64_t *version)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!name || !version)
        return fail(-EINVAL, "hetpu_ckpt_latest: NULL argument");
    int rc = wait_captures(g.get());
    if (rc)
        return rc;
    *version = g->engine->latest(name);
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_finalize(void)
{
    HETPU_CKPT_GUARD_BEGIN
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    int rc = wait_captures(g.get());
    {
        std::lock_guard<std::mutex> l(g->mu);
        g->stopping = true;
    }
    g->cv.notify_all();
    g->capture_thread.join();
    int drc = 0;
    std::string msg;
    try {
        g->engine->drain();
    } catch (const hetpu::ckpt::Error &e) {
        drc = e.code();
        msg = e.what();
    }
    g.reset();  // finalised even when a flush failed: the next init starts clean
    if (rc)
        return rc;
    return drc ? fail(drc, msg) : 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_get_stats(struct hetpu_ckpt_stats *out)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!out)
        return fail(-EINVAL, "hetpu_ckpt_get_stats: NULL argument");
    int rc = wait_captures(g.get());
    if (rc)
        return rc;
    const hetpu::ckpt::EngineStats s = g->engine->stats();
    *out = hetpu_ckpt_stats{};
    out->captured_bytes = s.captured_bytes;
    out->written_through_bytes = s.written_through_bytes;
    {
        std::lock_guard<std::mutex> l(g->mu);
        out->host_path_captures = g->host_path_captures;
        out->device_path_captures = g->device_path_captures;
    }
    out->device_local_bytes = s.device_local_bytes;
    out->device_peer_bytes = s.device_peer_bytes;
    out->device_to_host_at_capture_bytes = s.device_to_host_at_capture_bytes;
    out->device_flushed_bytes = s.device_flushed_bytes;
    out->device_evicted_bytes = s.device_evicted_bytes;
    out->restored_from_device_bytes = s.restored_from_device_bytes;
    out->restored_into_device_bytes = s.restored_into_device_bytes;
    out->restored_from_host_bytes = s.restored_from_host_bytes;
    out->restored_from_disk_bytes = s.restored_from_disk_bytes;
    out->prefetched_bytes = s.prefetched_bytes;
    out->device_prefetched_bytes = s.device_prefetched_bytes;
    out->peer_schedules = s.peer_schedules;
    out->peer_schedule_time_s = s.peer_schedule_time_s;
    out->device_capture_copy_s = s.device_capture_copy_s;
    out->device_cache_bytes = s.device_cache_bytes;
    out->device_count = g->device_of_node.size();
    out->device_chunk_refusals = s.device_chunk_refusals;
    out->device_pressure_released_bytes = s.device_pressure_released_bytes;
    out->device_pressure_evicted_bytes = s.device_pressure_evicted_bytes;
    out->device_regrown_bytes = s.device_regrown_bytes;
    out->device_caches_growing = s.device_caches_growing ? 1 : 0;
    return 0;
    HETPU_CKPT_GUARD_END
}

const char *hetpu_ckpt_last_error(void) { return t_error.c_str(); }

}  // extern "C"
