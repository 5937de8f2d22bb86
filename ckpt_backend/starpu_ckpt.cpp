// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue for the checkpoint engine: protected handles are captured by read
// acquisitions (starpu_data_acquire_cb, so the capture is ordered after the tasks already
// submitted and before later writers) and restored by write acquisitions. The acquisition
// callback only queues the capture; a capture thread does the copy and releases the handle,
// so no StarPU thread ever waits for the cache.
#include "hetpu/ckpt.h"

#include "ckpt_backend/engine/engine.h"

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <exception>
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

struct CaptureJob {
    std::string name;
    int64_t version;
    size_t index;
    starpu_data_handle_t handle;
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
};

std::mutex g_mu;  // serialises init/finalize/protect against each other
std::unique_ptr<Backend> g;
thread_local std::string t_error;

int fail(int rc, const std::string &msg)
{
    t_error = msg;
    return rc;
}

// Contiguous size of a handle's data in main memory, or 0 when the layout is not one block.
size_t contiguous_size(starpu_data_handle_t h)
{
    switch (starpu_data_get_interface_id(h)) {
    case STARPU_VECTOR_INTERFACE_ID:
    case STARPU_VARIABLE_INTERFACE_ID: return starpu_data_get_size(h);
    case STARPU_MATRIX_INTERFACE_ID:
        return starpu_matrix_get_local_ld(h) == starpu_matrix_get_nx(h) ? starpu_data_get_size(h) : 0;
    default: return 0;
    }
}

void on_acquired(void *arg)
{
    // Runs in a StarPU thread: queue and return.
    Backend *b = g.get();
    std::lock_guard<std::mutex> lock(b->mu);
    b->ready.push_back(static_cast<CaptureJob *>(arg));
    b->cv.notify_all();
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
        const void *src = starpu_data_handle_to_pointer(job->handle, STARPU_MAIN_RAM);
        try {
            b->engine->capture(job->name, job->version, job->index, src);
        } catch (const hetpu::ckpt::Error &e) {
            rc = e.code();
            msg = e.what();
        } catch (const std::exception &e) {
            rc = -EIO;  // this thread has no caller to throw to: hetpu_ckpt_wait reports it
            msg = e.what();
        }
        starpu_data_release(job->handle);
        lock.lock();
        if (rc && !b->capture_error) {
            b->capture_error = rc;
            b->capture_error_message = msg;
        }
        --b->pending;
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
    b->engine = Engine::create(config);
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
    if (contiguous_size(handle) == 0)
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
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!name)
        return fail(-EINVAL, "checkpoint name is NULL");
    std::vector<RegionSpec> specs;
    for (const Protected &p : g->regions)
        specs.push_back({p.region, p.handle ? contiguous_size(p.handle) : p.size});
    g->engine->begin(name, version, specs);
    for (size_t i = 0; i < g->regions.size(); ++i) {
        const Protected &p = g->regions[i];
        if (!p.handle) {
            g->engine->capture(name, version, i, p.ptr);
            continue;
        }
        auto *job = new CaptureJob{name, version, i, p.handle};
        {
            std::lock_guard<std::mutex> l(g->mu);
            ++g->pending;
        }
        const int rc = starpu_data_acquire_cb(p.handle, STARPU_R, on_acquired, job);
        if (rc) {
            delete job;
            std::lock_guard<std::mutex> l(g->mu);
            --g->pending;
            return fail(rc < 0 ? rc : -EIO, "starpu_data_acquire_cb failed on region '" + p.region + "'");
        }
    }
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_wait(const char *name, int64_t version, enum hetpu_ckpt_tier tier)
{
    HETPU_CKPT_GUARD_BEGIN
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!name)
        return fail(-EINVAL, "checkpoint name is NULL");
    if (tier < HETPU_CKPT_TIER_HOST || tier > HETPU_CKPT_TIER_REMOTE)
        return fail(-EINVAL, "unknown tier");
    int rc = wait_captures(g.get());
    if (rc)
        return rc;
    g->engine->wait(name, version, static_cast<hetpu::ckpt::Tier>(tier));
    return 0;
    HETPU_CKPT_GUARD_END
}

int hetpu_ckpt_restore(const char *name, int64_t version)
{
    HETPU_CKPT_GUARD_BEGIN
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g)
        return fail(-EINVAL, "hetpu_ckpt is not initialised");
    if (!name)
        return fail(-EINVAL, "checkpoint name is NULL");
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
        const size_t size = p.handle ? contiguous_size(p.handle) : p.size;
        if (stored[k].size != size)
            return fail(-EINVAL, "region '" + p.region + "' is " + std::to_string(size) + " bytes, version " +
                                     std::to_string(version) + " holds " + std::to_string(stored[k].size));
        index_of[i] = k;
    }
    for (size_t i = 0; i < g->regions.size(); ++i) {
        const Protected &p = g->regions[i];
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

const char *hetpu_ckpt_last_error(void) { return t_error.c_str(); }

}  // extern "C"
