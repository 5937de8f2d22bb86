// hetpu/ckpt.h first: it wraps StarPU 1.3's starpu_disk.h for C++ (see the header).
#include <hetpu/ckpt.h>

#include "apps/kmeans/kmeans_checkpoint.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hetpu::kmeans {

namespace {

constexpr const char *kName = "kmeans";

// A TOML basic string: backslash and quote escaped (a control character in a directory
// name makes the backend's parser report the path, which is the right message anyway).
std::string toml_string(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '\\' || c == '"')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

bool is_directory(const std::string &path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

RunCheckpoints::RunCheckpoints(const Options &o, const InputFingerprint &fp)
    : options_(o), fp_(fp), buffer_(checkpoint_size(fp.k, fp.d))
{
}

RunCheckpoints::~RunCheckpoints()
{
    if (started_)
        hetpu_ckpt_finalize();
}

int RunCheckpoints::backend_error(const std::string &what, int rc)
{
    const char *msg = hetpu_ckpt_last_error();
    std::fprintf(stderr, "kmeans: checkpoint: %s failed: %s\n", what.c_str(),
                 msg && *msg ? msg : std::strerror(-rc));
    return 1;
}

int RunCheckpoints::protect(const char *region, size_t offset, size_t size)
{
    if (int rc = hetpu_ckpt_protect_buffer(region, buffer_.data() + offset, size); rc != 0)
        return backend_error(std::string("protecting the ") + region, rc);
    return 0;
}

int RunCheckpoints::start()
{
    const std::string &dir = options_.checkpoint_dir;
    if (options_.restart && !is_directory(dir)) {
        std::fprintf(stderr,
                     "kmeans: --restart: no checkpoint directory '%s': give the --checkpoint-dir of the run to "
                     "continue, or run without --restart to start afresh\n",
                     dir.c_str());
        return 1;
    }
    if (!options_.restart && ::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
        std::fprintf(stderr, "kmeans: cannot create --checkpoint-dir '%s': %s\n", dir.c_str(), std::strerror(errno));
        return 1;
    }
    // Each version is a few KiB at most: a small host cache holds several while they flush;
    // two complete versions on disk are enough to survive a crash during the newest's flush.
    const size_t host_bytes = std::max<size_t>(1 << 20, 4 * (buffer_.size() + 8192));
    const std::string toml = "versions_to_keep = 2\n[host]\nsize = " + std::to_string(host_bytes) +
                             "\n[local]\npath = " + toml_string(dir) + "\n";
    if (int rc = hetpu_ckpt_init_from_string(toml.c_str()); rc != 0)
        return backend_error("starting the backend on '" + dir + "'", rc);
    started_ = true;
    // The header alone first: a restart reads it before the centroids, whose size depends
    // on k and d (see kmeans_checkpoint_format.h).
    if (protect("header", 0, kCheckpointHeaderSize) != 0)
        return 1;
    if (options_.restart)
        return 0;
    int64_t newest = 0;
    int rc = hetpu_ckpt_latest(kName, &newest);
    if (rc == 0) {
        std::fprintf(stderr,
                     "kmeans: --checkpoint-dir '%s' already holds kmeans checkpoints (newest: iteration %lld): "
                     "continue that run with --restart, or give an empty directory\n",
                     dir.c_str(), static_cast<long long>(newest));
        return 1;
    }
    if (rc != -ENOENT)
        return backend_error("looking for earlier checkpoints", rc);
    return protect("centroids", kCheckpointHeaderSize, buffer_.size() - kCheckpointHeaderSize);
}

int RunCheckpoints::restore(IterationState &state)
{
    const std::string &dir = options_.checkpoint_dir;
    int64_t version = 0;
    int rc = hetpu_ckpt_latest(kName, &version);
    if (rc == -ENOENT) {
        std::fprintf(stderr,
                     "kmeans: --restart: no complete kmeans checkpoint in '%s': check --checkpoint-dir, or run "
                     "without --restart to start afresh\n",
                     dir.c_str());
        return 1;
    }
    if (rc != 0)
        return backend_error("looking for the newest checkpoint", rc);
    const std::string what = "restoring iteration " + std::to_string(version) + " from '" + dir + "'";
    if ((rc = hetpu_ckpt_restore(kName, version)) != 0)
        return backend_error(what, rc);
    std::string error;
    if (!check_checkpoint_header(buffer_.data(), fp_, error)) {
        std::fprintf(stderr, "kmeans: --restart from '%s': %s\n", dir.c_str(), error.c_str());
        return 1;
    }
    // Same k and d: the centroids region has the size this version holds.
    if (protect("centroids", kCheckpointHeaderSize, buffer_.size() - kCheckpointHeaderSize) != 0)
        return 1;
    if ((rc = hetpu_ckpt_restore(kName, version)) != 0)
        return backend_error(what, rc);
    if (!decode_checkpoint(buffer_.data(), buffer_.size(), fp_, state, error)) {
        std::fprintf(stderr, "kmeans: --restart from '%s': %s\n", dir.c_str(), error.c_str());
        return 1;
    }
    if (state.iteration != version) {
        std::fprintf(stderr,
                     "kmeans: --restart from '%s': version %lld holds iteration %u: the directory was written by "
                     "something else; start afresh without --restart\n",
                     dir.c_str(), static_cast<long long>(version), state.iteration);
        return 1;
    }
    return 0;
}

IterationHook RunCheckpoints::hook()
{
    if (options_.checkpoint_every == 0)
        return nullptr;
    return [this](const IterationState &s) {
        if (s.iteration % options_.checkpoint_every != 0)
            return 0;
        encode_checkpoint(s, fp_, buffer_.data());
        // Copies the buffer into the host cache and returns; the flush to the directory
        // happens in the background.
        if (int rc = hetpu_ckpt_checkpoint(kName, s.iteration); rc != 0) {
            backend_error("checkpoint of iteration " + std::to_string(s.iteration), rc);
            return rc;
        }
        ++taken_;
        return 0;
    };
}

int RunCheckpoints::finish()
{
    if (!started_)
        return 0;
    started_ = false;
    if (int rc = hetpu_ckpt_finalize(); rc != 0)
        return backend_error("writing the last checkpoints to '" + options_.checkpoint_dir + "'", rc);
    return 0;
}

}  // namespace hetpu::kmeans
