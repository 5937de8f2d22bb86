// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu/ckpt.h first: it wraps StarPU 1.3's starpu_disk.h for C++ (see the header).
#include <hetpu/ckpt.h>
#include <hetpu/mpi.h>

#include "apps/kmeans/kmeans_checkpoint.h"

#include "apps/common/app_checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hetpu::kmeans {

namespace {

constexpr const char *kName = "kmeans";

}  // namespace

namespace {

// Writes path atomically and durably: a crash leaves the old file or the new one.
bool write_file_atomically(const std::string &path, const std::string &text)
{
    const std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0)
        return false;
    const std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
    int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return true;
}

std::string global_record_path(const std::string &dir) { return dir + "/global"; }

// Rank 0's string on every rank.
std::string bcast_string(std::string s)
{
    uint64_t len = s.size();
    hetpu_mpi_bcast(&len, sizeof len);
    s.resize(len);
    if (len)
        hetpu_mpi_bcast(&s[0], len);
    return s;
}

}  // namespace

RunCheckpoints::RunCheckpoints(const Options &o, const InputFingerprint &fp)
    : options_(o), fp_(fp), buffer_(checkpoint_size(fp.k, fp.d))
{}

int RunCheckpoints::agree(int rc) const
{
    if (ranks_ <= 1)
        return rc;
    const long long all_ok = hetpu_mpi_min(rc == 0 ? 1 : 0);
    if (!all_ok && rc == 0)
        std::fprintf(stderr, "kmeans: checkpoint: stopping: another rank failed (see its message)\n");
    return all_ok ? 0 : 1;
}

void RunCheckpoints::publish(int64_t version)
{
    if (rank_ != 0 || version <= published_)
        return;
    if (!write_file_atomically(global_record_path(options_.checkpoint_dir), global_record_text(ranks_, version)))
        std::fprintf(stderr, "kmeans: checkpoint: cannot write the global record in '%s': %s\n",
                     options_.checkpoint_dir.c_str(), std::strerror(errno));
    else
        published_ = version;
}

RunCheckpoints::~RunCheckpoints()
{
    if (started_)
        hetpu_ckpt_finalize();
}

int RunCheckpoints::backend_error(const std::string &what, int rc)
{
    return apps::checkpoint_backend_error("kmeans", what, rc);
}

int RunCheckpoints::protect(const char *region, size_t offset, size_t size)
{
    if (int rc = hetpu_ckpt_protect_buffer(region, buffer_.data() + offset, size); rc != 0)
        return backend_error(std::string("protecting the ") + region, rc);
    return 0;
}

int RunCheckpoints::start()
{
    ranks_ = hetpu_mpi_size();
    rank_ = hetpu_mpi_rank();
    rank_dir_ = options_.checkpoint_dir;
    if (ranks_ <= 1)
        return start_local();
    const std::string &dir = options_.checkpoint_dir;
    rank_dir_ = dir + "/rank" + std::to_string(rank_);
    int rc = 0;
    if (options_.restart) {
        // Rank 0 reads the global record; every rank gets its text, so all take the same
        // decision (and the same version).
        std::string text;
        if (rank_ == 0) {
            std::ifstream in(global_record_path(dir));
            std::stringstream ss;
            ss << in.rdbuf();
            text = in ? ss.str() : "";
        }
        text = bcast_string(text);
        int ranks = 0;
        std::string error;
        if (text.empty()) {
            std::fprintf(stderr,
                         "kmeans: --restart: no global checkpoint record in '%s' (no version was complete on every "
                         "rank): run without --restart to start afresh\n",
                         dir.c_str());
            rc = 1;
        } else if (!parse_global_record(text, ranks, restart_version_, error)) {
            std::fprintf(stderr, "kmeans: --restart: '%s': %s\n", global_record_path(dir).c_str(), error.c_str());
            rc = 1;
        } else if (ranks != ranks_) {
            std::fprintf(stderr,
                         "kmeans: --restart: the checkpoints in '%s' were taken by %d ranks, this run has %d: restart "
                         "with the same number of ranks (mpirun -np %d)\n",
                         dir.c_str(), ranks, ranks_, ranks);
            rc = 1;
        }
        published_ = restart_version_;
    } else {
        if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
            std::fprintf(stderr, "kmeans: cannot create --checkpoint-dir '%s': %s\n", dir.c_str(),
                         std::strerror(errno));
            rc = 1;
        } else if (rank_ == 0 && ::access(global_record_path(dir).c_str(), F_OK) == 0) {
            std::fprintf(stderr,
                         "kmeans: --checkpoint-dir '%s' already holds a multi-rank kmeans run: continue it with "
                         "--restart, or give an empty directory\n",
                         dir.c_str());
            rc = 1;
        }
    }
    if (agree(rc) != 0)
        return 1;
    return agree(start_local());
}

int RunCheckpoints::start_local()
{
    const std::string &dir = rank_dir_;
    if (apps::prepare_checkpoint_dir("kmeans", dir, options_.restart) != 0)
        return 1;
    // Each version is a few KiB at most: a small host cache holds several while they flush;
    // two complete versions on disk are enough to survive a crash during the newest's flush.
    const size_t host_bytes = std::max<size_t>(1 << 20, 4 * (buffer_.size() + 8192));
    // Several ranks: the global record may lag a rank's newest version by one or two, so
    // each rank keeps a few more.
    const int keep = ranks_ > 1 ? 4 : 2;
    const std::string toml = "versions_to_keep = " + std::to_string(keep) +
                             "\n[host]\nsize = " + std::to_string(host_bytes) +
                             "\n[local]\npath = " + apps::toml_string(dir) + "\n";
    if (int rc = hetpu_ckpt_init_from_string(toml.c_str()); rc != 0)
        return backend_error("starting the backend on '" + dir + "'", rc);
    started_ = true;
    // The header alone first: a restart reads it before the centroids, whose size depends
    // on k and d (see kmeans_checkpoint_format.h).
    if (protect("header", 0, kCheckpointHeaderSize) != 0)
        return 1;
    if (options_.restart)
        return 0;
    if (apps::refuse_earlier_checkpoints("kmeans", kName, dir, "iteration") != 0)
        return 1;
    return protect("centroids", kCheckpointHeaderSize, buffer_.size() - kCheckpointHeaderSize);
}

int RunCheckpoints::restore(IterationState &state) { return agree(restore_local(state)); }

int RunCheckpoints::restore_local(IterationState &state)
{
    const std::string &dir = rank_dir_;
    int64_t version = 0;
    // Several ranks: the version of the global record, which every rank holds.
    if (ranks_ > 1)
        version = restart_version_;
    else if (apps::newest_checkpoint("kmeans", kName, dir, version) != 0)
        return 1;
    const std::string what = "restoring iteration " + std::to_string(version) + " from '" + dir + "'";
    if (int rc = hetpu_ckpt_restore(kName, version); rc != 0)
        return backend_error(what, rc);
    std::string error;
    if (!check_checkpoint_header(buffer_.data(), fp_, error)) {
        std::fprintf(stderr, "kmeans: --restart from '%s': %s\n", dir.c_str(), error.c_str());
        return 1;
    }
    // Same k and d: the centroids region has the size this version holds.
    if (protect("centroids", kCheckpointHeaderSize, buffer_.size() - kCheckpointHeaderSize) != 0)
        return 1;
    if (int rc = hetpu_ckpt_restore(kName, version); rc != 0)
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
        const int64_t previous = last_taken_;
        last_taken_ = s.iteration;
        if (ranks_ > 1) {
            // Every rank is here at the same iteration (they follow rank 0's sums). The
            // previous version has had a whole iteration to reach the disk: wait until it
            // has (hetpu_ckpt_latest also counts versions still only in the host cache,
            // which a crash loses), and publish it once every rank says so.
            int64_t durable = -1;
            if (previous >= 0 && hetpu_ckpt_wait(kName, previous, HETPU_CKPT_TIER_LOCAL) == 0)
                durable = previous;
            publish(hetpu_mpi_min(durable));
        }
        return 0;
    };
}

int RunCheckpoints::finish()
{
    if (!started_)
        return 0;
    started_ = false;
    int rc = hetpu_ckpt_finalize();
    if (rc != 0)
        backend_error("writing the last checkpoints to '" + rank_dir_ + "'", rc);
    if (ranks_ > 1) {
        // Finalised: every version taken is durable. Published only if every rank says so.
        const long long newest = hetpu_mpi_min(rc == 0 ? last_taken_ : -1);
        publish(newest);
    }
    return rc != 0 ? 1 : 0;
}

}  // namespace hetpu::kmeans
