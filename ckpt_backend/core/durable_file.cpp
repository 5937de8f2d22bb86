// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/durable_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hetpu::ckpt {

namespace {

[[noreturn]] void fail(int err, const std::string &what, const std::string &path)
{
    throw Error(-err, what + " '" + path + "': " + std::strerror(err));
}

}  // namespace

void sync_directory(const std::string &dir)
{
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        fail(errno, "cannot open directory", dir);
    int rc = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    // Some file systems (tmpfs) refuse fsync on directories; the rename is still atomic.
    if (rc != 0 && rc != EINVAL && rc != EROFS)
        fail(rc, "cannot fsync directory", dir);
}

unsigned long long directory_bytes(const std::string &dir)
{
    unsigned long long total = 0;
    DIR *d = ::opendir(dir.c_str());
    if (!d)
        return 0;
    while (struct dirent *e = ::readdir(d)) {
        struct stat st;
        std::string p = dir + "/" + e->d_name;
        if (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode))
            total += st.st_size;
    }
    ::closedir(d);
    return total;
}

void write_file_durably(const std::string &dir, const std::string &file, const void *data, std::size_t size,
                        const WriteOptions &opts)
{
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0)
        fail(errno, "checkpoint directory missing (create it or fix the tier path)", dir);
    if (!S_ISDIR(st.st_mode))
        fail(ENOTDIR, "tier path is not a directory", dir);
    const std::string final_path = dir + "/" + file;
    if (opts.simulated_capacity && directory_bytes(dir) + size > opts.simulated_capacity)
        fail(ENOSPC, "no space left (simulated tier capacity) writing", final_path);
    const std::string tmp = dir + "/." + file + ".tmp." + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail(errno, "cannot create", tmp);
    const char *p = static_cast<const char *>(data);
    std::size_t left = size;
    int err = 0;
    while (left > 0) {
        if (opts.between_chunks && left != size)
            opts.between_chunks();
        ssize_t n = ::write(fd, p, std::min(left, kWriteChunk));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (!err && ::fsync(fd) != 0)
        err = errno;
    if (!err && opts.drop_page_cache)
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (::close(fd) != 0 && !err)
        err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        fail(err, "cannot write", tmp);
    }
    if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
        err = errno;
        ::unlink(tmp.c_str());
        fail(err, "cannot rename into place", final_path);
    }
    sync_directory(dir);
}

void read_file_exact(const std::string &path, void *data, std::size_t size)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail(errno, "cannot open", path);
    char *p = static_cast<char *>(data);
    std::size_t left = size;
    int err = 0;
    while (left > 0) {
        ssize_t n = ::read(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        if (n == 0) {
            err = ENODATA;
            break;
        }  // shorter than recorded: torn or truncated
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (err == ENODATA)
        fail(EIO, "file shorter than its manifest records", path);
    if (err)
        fail(err, "cannot read", path);
}

}  // namespace hetpu::ckpt
