// SPDX-License-Identifier: LGPL-2.1-or-later
// The node-wide MGB arbiter: a Ledger in POSIX shared memory under a process-shared robust
// mutex (see node_arbiter.h for the contract).
//
// Why each piece is there:
// - O_CREAT|O_EXCL decides exactly one creator; everyone else waits (bounded) for the
//   creator's release-store of `ready`, so nobody ever locks a mutex that is not yet
//   initialised or reads a half-initialised Ledger.
// - The mutex is robust: a holder killed by SIGKILL makes the next lock return EOWNERDEAD
//   instead of blocking forever. The grants are the record and the device counters are
//   derived from them, so the counters are rebuilt and the dead process's grants (its
//   half-made one included) are released.
// - A process killed while not holding the lock leaves its grants behind with nobody to
//   release them; every locker therefore checks the registered pids (kill(pid, 0)) and
//   reclaims the dead ones.
#include "common/settings.h"
#include "node_arbiter/node_arbiter.h"
#include "node_arbiter/share_clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>
#include <vector>

namespace hetpu::mgb {

namespace {

constexpr uint32_t kSegmentMagic = 0x48415242;  // "HARB": hetpu arbiter
// Bump on any change of the header below (the Ledger has its own kLedgerVersion, checked
// too, so a Ledger change alone need not bump this).
constexpr uint32_t kSegmentVersion = 3;  // 2: the share clock; 3: its device energy readings
constexpr long kReadyWaitMs = 5000;
constexpr time_t kReaderLockWaitS = 3;  // open_existing's lock: see with_ledger
// A full scan (every grant's pid, not only the registered processes) at most this often:
// it walks all kMaxGrants slots (a third of a megabyte), too much for every lock.
constexpr uint64_t kFullReclaimIntervalNs = 1000000000ull;

uint64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void log_error(const std::string &name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_error(const std::string &name, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "hetpu: mgb arbiter %s: %s\n", name.c_str(), text);
}

std::string remedy(const std::string &name)
{
    return "remove it with `rm /dev/shm" + name + "` (or `hetpu mgb reset --arbiter " + name +
           "`) once no hetpu process uses it, or set HETPU_MGB_ARBITER to another name";
}

bool valid_name(const std::string &name)
{
    // POSIX: one leading '/', no other; Linux adds NAME_MAX for the file under /dev/shm.
    return name.size() >= 2 && name.size() <= 255 && name[0] == '/' && name.find('/', 1) == std::string::npos;
}

// kill(pid, 0): ESRCH means no such process; EPERM means it exists but belongs to someone
// else (it is alive). pid <= 0 would signal a process group: never a live entry.
bool pid_alive(int32_t pid)
{
    if (pid <= 0)
        return false;
    return ::kill(pid_t(pid), 0) == 0 || errno != ESRCH;
}

// ledger_reclaim_dead takes a plain function pointer and may ask about the same pid once per
// grant; the answers of one scan are memoised here (one scan runs at a time per thread).
thread_local std::vector<std::pair<int32_t, bool>> alive_memo;

bool memo_alive(int32_t pid)
{
    for (const auto &e : alive_memo)
        if (e.first == pid)
            return e.second;
    const bool alive = pid_alive(pid);
    alive_memo.emplace_back(pid, alive);
    return alive;
}

}  // namespace

struct NodeArbiter::Segment {
    // magic and version stay the first two fields in every layout, so any hetpu can tell a
    // segment of another layout apart and name it in its error.
    uint32_t magic;
    uint32_t version;
    uint32_t ready;  // 1 once initialised; only touched with __atomic builtins
    uint32_t reserved0;
    uint64_t size;                  // sizeof(Segment) of the creator
    uint64_t last_full_reclaim_ns;  // CLOCK_MONOTONIC (node-wide); guarded by mutex
    pthread_mutex_t mutex;          // PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST, ERRORCHECK
    Ledger ledger;
    ShareClock clock;  // who used each device how much, for the accounting hook (share_clock.h)
};

namespace {

std::string layout_error(const std::string &name, uint32_t magic, uint32_t version, uint64_t size,
                         uint64_t expected_size)
{
    char text[256];
    std::snprintf(text, sizeof text,
                  "MGB arbiter segment %s has another layout (magic 0x%08x, version %u, %llu bytes; this hetpu "
                  "expects magic 0x%08x, version %u, %llu bytes): ",
                  name.c_str(), magic, version, (unsigned long long)size, kSegmentMagic, kSegmentVersion,
                  (unsigned long long)expected_size);
    return text + remedy(name);
}

// Opens (creating when may_create) and maps the segment; returns it initialised and
// checked. Throws std::runtime_error naming the problem and its remedy.
template <typename Segment> Segment *map_segment(const std::string &name, bool may_create, bool *created_out)
{
    static_assert(__atomic_always_lock_free(sizeof(uint32_t), 0), "ready is shared between processes");
    *created_out = false;
    if (!valid_name(name)) {
        throw std::runtime_error("invalid MGB arbiter name '" + name +
                                 "': it must be '/' followed by up to 254 characters, no other '/'");
    }
    int fd = -1;
    bool created = false;
    // Two tries: a segment unlinked (hetpu mgb reset) between our O_EXCL and our plain open
    // is created on the second.
    for (int attempt = 0; attempt < 2 && fd < 0; ++attempt) {
        if (may_create) {
            fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd >= 0) {
                created = true;
                break;
            }
            if (errno != EEXIST) {
                throw std::runtime_error("cannot create MGB arbiter segment " + name + ": " + std::strerror(errno));
            }
        }
        fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
        if (fd < 0 && !(may_create && errno == ENOENT)) {
            if (errno == ENOENT)
                throw std::runtime_error("MGB arbiter segment " + name + " does not exist");
            throw std::runtime_error("cannot open MGB arbiter segment " + name + ": " + std::strerror(errno) +
                                     (errno == EACCES ? " (it belongs to another user? " + remedy(name) + ")" : ""));
        }
    }
    if (fd < 0) {
        throw std::runtime_error("cannot open MGB arbiter segment " + name + ": it keeps disappearing (being reset?)");
    }

    const uint64_t expected = sizeof(Segment);
    auto fail = [&](std::string text) -> Segment * {
        if (created)  // nobody can use a segment we failed to initialise: do not leave it behind
            shm_unlink(name.c_str());
        ::close(fd);
        throw std::runtime_error(std::move(text));
    };

    if (created) {
        if (ftruncate(fd, off_t(expected)) != 0)
            return fail("cannot size MGB arbiter segment " + name + ": " + std::strerror(errno));
    } else {
        struct stat st {};
        if (fstat(fd, &st) != 0)
            return fail("cannot stat MGB arbiter segment " + name + ": " + std::strerror(errno));
        // Another user's segment under our name could feed us arbitrary grants.
        if (st.st_uid != geteuid())
            return fail("MGB arbiter segment " + name + " belongs to uid " + std::to_string(st.st_uid) +
                        ", not to this user (" + std::to_string(geteuid()) + "): " + remedy(name));
        // The creator may be between shm_open and ftruncate: size 0 means "not yet".
        const uint64_t deadline = monotonic_ns() + uint64_t(kReadyWaitMs) * 1000000ull;
        while (st.st_size == 0 && monotonic_ns() < deadline) {
            usleep(1000);
            if (fstat(fd, &st) != 0)
                return fail("cannot stat MGB arbiter segment " + name + ": " + std::strerror(errno));
        }
        if (st.st_size == 0)
            return fail("MGB arbiter segment " + name + " is empty after " + std::to_string(kReadyWaitMs / 1000) +
                        " s (its creator died while creating it?): " + remedy(name));
        if (uint64_t(st.st_size) != expected) {
            uint32_t head[2] = {0, 0};
            if (st.st_size >= off_t(sizeof head))
                if (void *p = mmap(nullptr, sizeof head, PROT_READ, MAP_SHARED, fd, 0); p != MAP_FAILED) {
                    std::memcpy(head, p, sizeof head);
                    munmap(p, sizeof head);
                }
            return fail(layout_error(name, head[0], head[1], uint64_t(st.st_size), expected));
        }
    }

    void *p = mmap(nullptr, expected, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return fail("cannot map MGB arbiter segment " + name + ": " + std::strerror(errno));
    ::close(fd);  // the mapping keeps the segment
    fd = -1;
    auto *seg = static_cast<Segment *>(p);

    if (created) {
        // Fresh from ftruncate: all zero. Everything is set up before `ready` is published.
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
        // A with_ledger called from inside fn gets EDEADLK (logged) instead of hanging.
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
        const int rc = pthread_mutex_init(&seg->mutex, &attr);
        pthread_mutexattr_destroy(&attr);
        if (rc != 0) {
            munmap(p, expected);
            shm_unlink(name.c_str());
            throw std::runtime_error("cannot initialise the mutex of MGB arbiter segment " + name + ": " +
                                     std::strerror(rc));
        }
        ledger_init(seg->ledger);
        seg->clock.last_ns = monotonic_ns();
        seg->size = expected;
        seg->last_full_reclaim_ns = 0;
        __atomic_store_n(&seg->magic, kSegmentMagic, __ATOMIC_RELAXED);
        __atomic_store_n(&seg->version, kSegmentVersion, __ATOMIC_RELAXED);
        __atomic_store_n(&seg->ready, 1u, __ATOMIC_RELEASE);  // last: publishes all of the above
        *created_out = true;
        return seg;
    }

    // Wait for the creator's publication. A magic or version that is already set and wrong
    // is an error at once (waiting would not change it).
    const uint64_t deadline = monotonic_ns() + uint64_t(kReadyWaitMs) * 1000000ull;
    for (;;) {
        const uint32_t magic = __atomic_load_n(&seg->magic, __ATOMIC_RELAXED);
        const uint32_t version = __atomic_load_n(&seg->version, __ATOMIC_RELAXED);
        if ((magic != 0 && magic != kSegmentMagic) ||
            (magic == kSegmentMagic && version != 0 && version != kSegmentVersion)) {
            munmap(p, expected);
            throw std::runtime_error(layout_error(name, magic, version, expected, expected));
        }
        if (__atomic_load_n(&seg->ready, __ATOMIC_ACQUIRE) == 1)
            break;
        if (monotonic_ns() >= deadline) {
            munmap(p, expected);
            throw std::runtime_error("MGB arbiter segment " + name + " was not initialised within " +
                                     std::to_string(kReadyWaitMs / 1000) +
                                     " s (its creator died while creating it?): " + remedy(name));
        }
        usleep(1000);
    }
    if (seg->magic != kSegmentMagic || seg->version != kSegmentVersion || seg->size != expected ||
        seg->ledger.magic != kLedgerMagic || seg->ledger.version != kLedgerVersion) {
        std::string text = layout_error(name, seg->magic, seg->version, seg->size, expected);
        if (seg->ledger.magic != kLedgerMagic || seg->ledger.version != kLedgerVersion)
            text += " (its ledger has version " + std::to_string(seg->ledger.version) + ", this hetpu's " +
                    std::to_string(kLedgerVersion) + ")";
        munmap(p, expected);
        throw std::runtime_error(text);
    }
    return seg;
}

}  // namespace

std::string NodeArbiter::normalize_name(const std::string &name)
{
    if (name.empty() || name[0] == '/')
        return name;
    return "/" + name;
}

bool NodeArbiter::disabled_by_environment()
{
    const std::optional<std::string> v = Settings().text("HETPU_MGB_ARBITER");
    if (!v)
        return false;
    std::string s(*v);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s == "off" || s == "0" || s == "no" || s == "false";
}

std::string NodeArbiter::default_name()
{
    const std::optional<std::string> v = Settings().text("HETPU_MGB_ARBITER");
    if (v && !disabled_by_environment())
        return normalize_name(*v);
    // Per user: the segment is 0600, so two users' processes could not share one anyway.
    return "/hetpu-mgb-" + std::to_string(geteuid());
}

NodeArbiter::NodeArbiter(std::string name, Segment *segment, bool registered)
    : name_(std::move(name)), segment_(segment), registered_(registered)
{}

std::unique_ptr<NodeArbiter> NodeArbiter::open(const std::string &name, const std::string &policy)
{
    const std::string n = normalize_name(name);
    bool created = false;
    Segment *seg = map_segment<Segment>(n, true, &created);
    std::unique_ptr<NodeArbiter> arbiter(new NodeArbiter(n, seg, true));
    arbiter->owner_pid_ = int32_t(getpid());
    remember_own_share(std::nullopt);  // a new session: the last one's share is charged already
    int rc = -EIO;                     // stays so if with_ledger could not run fn (already logged)
    arbiter->with_ledger([&](Ledger &ledger) { rc = ledger_attach_process(ledger, arbiter->owner_pid_, policy); });
    if (rc < 0) {
        arbiter->registered_ = false;  // nothing to detach
        throw std::runtime_error(rc == -ENOSPC
                                     ? "MGB arbiter segment " + n + " is full (" + std::to_string(kMaxProcesses) +
                                           " processes already registered)"
                                     : "cannot register with MGB arbiter segment " + n + ": " + std::strerror(-rc));
    }
    return arbiter;
}

std::unique_ptr<NodeArbiter> NodeArbiter::open_existing(const std::string &name)
{
    const std::string n = normalize_name(name);
    bool created = false;
    Segment *seg = map_segment<Segment>(n, false, &created);
    return std::unique_ptr<NodeArbiter>(new NodeArbiter(n, seg, false));
}

std::unique_ptr<NodeArbiter> NodeArbiter::open_unregistered(const std::string &name)
{
    const std::string n = normalize_name(name);
    bool created = false;
    Segment *seg = map_segment<Segment>(n, true, &created);
    std::unique_ptr<NodeArbiter> arbiter(new NodeArbiter(n, seg, false));
    arbiter->blocking_lock_ = true;
    return arbiter;
}

bool NodeArbiter::unlink(const std::string &name) { return shm_unlink(normalize_name(name).c_str()) == 0; }

bool NodeArbiter::exists(const std::string &name)
{
    const std::string n = normalize_name(name);
    if (!valid_name(n))
        return false;
    const int fd = shm_open(n.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd >= 0) {
        ::close(fd);
        return true;
    }
    return errno != ENOENT;  // EACCES: there, but not ours
}

NodeArbiter::~NodeArbiter()
{
    // getpid() check: a forked child inherits this object; its exit must not release the
    // parent's grants.
    if (registered_ && owner_pid_ == int32_t(getpid()))
        with_ledger([this](Ledger &ledger) {
            // with_ledger advanced the share clock up to now: this is the whole of our use.
            remember_own_share(share_clock_snapshot(segment_->clock, ledger, owner_pid_));
            ledger_detach_process(ledger, owner_pid_);
        });
    munmap(segment_, sizeof(Segment));
}

std::string NodeArbiter::describe() const { return "node-wide arbiter " + name_; }

void NodeArbiter::reclaim_dead_locked(bool full)
{
    Ledger &ledger = segment_->ledger;
    const uint64_t now = monotonic_ns();
    if (!full && now - segment_->last_full_reclaim_ns >= kFullReclaimIntervalNs)
        full = true;
    alive_memo.clear();
    if (!full) {
        // The cheap check, on every lock: only registered processes (a handful of kill()s).
        bool any_dead = false;
        for (const ProcessEntry &p : ledger.processes)
            if (p.pid != 0 && !memo_alive(p.pid)) {
                any_dead = true;
                break;
            }
        if (!any_dead)
            return;
    } else {
        segment_->last_full_reclaim_ns = now;
    }
    const unsigned n = ledger_reclaim_dead(ledger, memo_alive);
    if (n > 0)
        log_error(name_, "released %u grant(s) of processes that exited without releasing them", n);
}

void NodeArbiter::with_ledger(const std::function<void(Ledger &)> &fn)
{
    Segment *seg = segment_;
    int rc;
    if (registered_ || blocking_lock_) {
        rc = pthread_mutex_lock(&seg->mutex);
    } else {
        // A status reader must not hang behind a holder that is stopped (SIGSTOP, a
        // debugger): it gives up after a while and says so.
        timespec deadline{};
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += kReaderLockWaitS;
        rc = pthread_mutex_timedlock(&seg->mutex, &deadline);
    }
    bool repaired = false;
    if (rc == EOWNERDEAD) {
        // The holder died mid-update: the counters may disagree with the grants. Rebuild them
        // from the grants, then drop the dead holder's grants (below).
        pthread_mutex_consistent(&seg->mutex);
        ledger_rebuild_counters(seg->ledger);
        repaired = true;
        log_error(name_, "a process died while holding the lock; ledger repaired");
    } else if (rc != 0) {
        // EDEADLK (with_ledger inside fn), ETIMEDOUT (readers only), ENOTRECOVERABLE (cannot
        // happen: we always mark the mutex consistent): fn is not run; callers see their
        // defaults (e.g. no grant).
        log_error(name_, "cannot lock: %s (operation skipped)", std::strerror(rc));
        return;
    }
    // The share clock first, with the Ledger as it stood since the last lock (a dead
    // process's grants included: its share-time runs until its death is noticed, just below).
    share_clock_advance(seg->clock, seg->ledger, monotonic_ns());
    // Every locker reclaims what dead processes held, status readers included (with a full
    // scan: they are rare), so `hetpu mgb status` never shows a stale reservation.
    reclaim_dead_locked(repaired || (!registered_ && !blocking_lock_));
    try {
        fn(seg->ledger);
    } catch (const std::exception &e) {
        log_error(name_, "%s (ignored; counters rebuilt)", e.what());
        ledger_rebuild_counters(seg->ledger);
    } catch (...) {
        log_error(name_, "unknown exception (ignored; counters rebuilt)");
        ledger_rebuild_counters(seg->ledger);
    }
    pthread_mutex_unlock(&seg->mutex);
}

}  // namespace hetpu::mgb
