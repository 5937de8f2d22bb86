// SPDX-License-Identifier: LGPL-2.1-or-later
// NodeArbiter: the Ledger in POSIX shared memory, shared by processes (forked children
// here) that race to create it, die holding its lock, or die holding grants.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "node_arbiter/node_arbiter.h"
#include "tests/unit/node_arbiter/arbiter_test_util.h"
#include "tests/unit/thrown_message.h"

namespace hetpu::mgb {
namespace {

// A forked child reports failure by its exit status: an exception would abort it instead.
std::unique_ptr<NodeArbiter> open_in_child(const std::string &name, const char *policy)
{
    try {
        return NodeArbiter::open(name, policy);
    } catch (const std::runtime_error &e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        return nullptr;
    }
}

using test::Child;
using test::grants_of;
using test::live_grants;
using test::Pipe;
using test::place_on;
using test::registered;
using test::registered_count;
using test::ScopedSegmentName;

const int32_t kSelf = int32_t(getpid());

// Counters equal the sums over the live grants (what a repaired ledger must satisfy).
void expect_consistent(const Ledger &ledger)
{
    for (unsigned d = 0; d < ledger.ndevices; ++d) {
        uint64_t bytes = 0, warps = 0;
        unsigned tasks = 0;
        for (const Grant &g : ledger.grants)
            if (g.id != 0 && g.device == d) {
                bytes += g.bytes;
                warps += g.warps;
                ++tasks;
            }
        EXPECT_EQ(ledger.devices[d].reserved_bytes, bytes) << "device " << d;
        EXPECT_EQ(ledger.devices[d].in_use_warps, warps) << "device " << d;
        EXPECT_EQ(ledger.devices[d].tasks, tasks) << "device " << d;
    }
}

// Restores an environment variable when the test ends.
class ScopedEnv {
public:
    explicit ScopedEnv(const char *name) : name_(name)
    {
        if (const char *v = std::getenv(name))
            old_ = std::make_unique<std::string>(v);
    }
    ~ScopedEnv()
    {
        if (old_)
            setenv(name_, old_->c_str(), 1);
        else
            unsetenv(name_);
    }

private:
    const char *name_;
    std::unique_ptr<std::string> old_;
};

TEST(NodeArbiter, NameFromEnvironment)
{
    ScopedEnv env("HETPU_MGB_ARBITER");
    unsetenv("HETPU_MGB_ARBITER");
    EXPECT_EQ(NodeArbiter::default_name(), "/hetpu-mgb-" + std::to_string(geteuid()));
    EXPECT_FALSE(NodeArbiter::disabled_by_environment());
    setenv("HETPU_MGB_ARBITER", "/my-arbiter", 1);
    EXPECT_EQ(NodeArbiter::default_name(), "/my-arbiter");
    setenv("HETPU_MGB_ARBITER", "no-slash", 1);
    EXPECT_EQ(NodeArbiter::default_name(), "/no-slash");
    for (const char *off : {"off", "0", "no", "false", "OFF", "False"}) {
        setenv("HETPU_MGB_ARBITER", off, 1);
        EXPECT_TRUE(NodeArbiter::disabled_by_environment()) << off;
        EXPECT_EQ(NodeArbiter::default_name(), "/hetpu-mgb-" + std::to_string(geteuid())) << off;
    }
}

TEST(NodeArbiter, InvalidNameIsAnError)
{
    EXPECT_THROW_MSG(NodeArbiter::open("/a/b", "mgb"), std::runtime_error,
                     "invalid MGB arbiter name '/a/b': it must be '/' followed by up to 254 characters, no other '/'");
}

TEST(NodeArbiter, OpenCreatesAndRegisters)
{
    ScopedSegmentName name;
    EXPECT_FALSE(NodeArbiter::exists(name.str()));
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    EXPECT_TRUE(NodeArbiter::exists(name.str()));
    EXPECT_TRUE(arbiter->node_wide());
    EXPECT_EQ(arbiter->describe(), "node-wide arbiter " + name.str());
    struct stat st {};
    const std::string path = "/dev/shm" + name.str();
    if (stat(path.c_str(), &st) == 0) {  // Linux keeps POSIX shared memory there
        EXPECT_EQ(st.st_mode & 0777, 0600u);
    }
    arbiter->with_ledger([](Ledger &ledger) {
        EXPECT_EQ(ledger.magic, kLedgerMagic);
        ASSERT_TRUE(registered(ledger, kSelf));
        for (const ProcessEntry &p : ledger.processes)
            if (p.pid == kSelf) {
                EXPECT_STREQ(p.policy, "mgb");
            }
    });
}

TEST(NodeArbiter, OpenExistingNeedsASegmentAndDoesNotRegister)
{
    ScopedSegmentName name;
    EXPECT_THROW_MSG(NodeArbiter::open_existing(name.str()), std::runtime_error,
                     "MGB arbiter segment " + name.str() + " does not exist");
    auto owner = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(owner, nullptr);
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);
    reader->with_ledger([](Ledger &ledger) { EXPECT_EQ(registered_count(ledger), 1u); });
    reader.reset();  // a reader's destruction detaches nobody
    owner->with_ledger([](Ledger &ledger) { EXPECT_TRUE(registered(ledger, kSelf)); });
}

// The checkpoint cache's access: it creates the segment when needed, registers
// nothing, and its destruction releases nothing of the process's (the scheduler's grants
// stay); its memory-only reservations are the process's like any grant.
TEST(NodeArbiter, UnregisteredOpenerHoldsReservationsAndDetachesNobody)
{
    ScopedSegmentName name;
    auto cache = NodeArbiter::open_unregistered(name.str());
    ASSERT_NE(cache, nullptr);
    auto owner = NodeArbiter::open(name.str(), "mgb");
    uint64_t task = 0, chunk = 0;
    owner->with_ledger([&](Ledger &ledger) { task = place_on(ledger, "test:0", 1 << 20, kSelf); });
    cache->with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(registered_count(ledger), 1u) << "only the scheduler";
        chunk = ledger_reserve_memory(ledger, 0, kSelf, 4 << 20);
    });
    ASSERT_NE(task, 0u);
    ASSERT_NE(chunk, 0u);
    cache.reset();
    owner->with_ledger([&](Ledger &ledger) {
        EXPECT_TRUE(registered(ledger, kSelf));
        EXPECT_EQ(grants_of(ledger, kSelf), 2u) << "the cache's destruction released nothing";
        EXPECT_EQ(ledger.devices[0].reserved_bytes, uint64_t(5) << 20);
        EXPECT_EQ(ledger.devices[0].tasks, 1u);
        EXPECT_TRUE(ledger_release(ledger, chunk));
    });
}

TEST(NodeArbiter, DestructionDetachesAndReleasesGrants)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    arbiter->with_ledger([](Ledger &ledger) {
        ASSERT_NE(place_on(ledger, "test:0", 1 << 20, kSelf), 0u);
        ASSERT_NE(place_on(ledger, "test:0", 1 << 20, kSelf), 0u);
    });
    arbiter.reset();
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);  // the segment outlives its users
    reader->with_ledger([](Ledger &ledger) {
        EXPECT_FALSE(registered(ledger, kSelf));
        EXPECT_EQ(live_grants(ledger), 0u);
        ASSERT_EQ(ledger.ndevices, 1u);
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 0u);
        EXPECT_EQ(ledger.devices[0].tasks, 0u);
    });
}

TEST(NodeArbiter, TwoProcessesSeeEachOthersGrants)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    arbiter->with_ledger([](Ledger &ledger) { ASSERT_NE(place_on(ledger, "test:0", 1000, kSelf), 0u); });

    Pipe placed, done;
    Child child([&]() -> int {
        placed.close_read();
        done.close_write();
        auto mine = open_in_child(name.str(), "mgb-exact");
        if (!mine)
            return 2;
        const int32_t me = int32_t(getpid());
        int rc = 0;
        mine->with_ledger([&](Ledger &ledger) {
            if (ledger.ndevices != 1 || ledger.devices[0].reserved_bytes != 1000 || grants_of(ledger, kSelf) != 1)
                rc = 3;  // the parent's grant is not visible
            else if (place_on(ledger, "test:0", 500, me) == 0)
                rc = 4;
        });
        placed.send();
        done.receive();  // until the parent has looked (end of file)
        return rc;
    });
    placed.close_write();
    done.close_read();
    ASSERT_TRUE(placed.receive()) << "child exited early: " << child.wait();
    arbiter->with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 1500u);
        EXPECT_EQ(grants_of(ledger, child.pid()), 1u);
        EXPECT_TRUE(registered(ledger, child.pid()));
        for (const ProcessEntry &p : ledger.processes)
            if (p.pid == child.pid()) {
                EXPECT_STREQ(p.policy, "mgb-exact");
            }
    });
    const int32_t child_pid = child.pid();
    done.close_write();
    EXPECT_EQ(child.wait(), 0);
    // The child's destructor detached it.
    arbiter->with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 1000u);
        EXPECT_FALSE(registered(ledger, child_pid));
        EXPECT_EQ(grants_of(ledger, child_pid), 0u);
    });
}

TEST(NodeArbiter, CreationRaceGivesOneLedger)
{
    ScopedSegmentName name;
    constexpr int kChildren = 8;
    Pipe go, placed, finish;
    std::vector<std::unique_ptr<Child>> children;
    for (int i = 0; i < kChildren; ++i)
        children.push_back(std::make_unique<Child>([&]() -> int {
            go.close_write();
            placed.close_read();
            finish.close_write();
            go.receive();  // end of file: every child starts at once
            std::unique_ptr<NodeArbiter> arbiter;
            try {
                arbiter = NodeArbiter::open(name.str(), "mgb");
            } catch (const std::runtime_error &e) {
                std::fprintf(stderr, "child: %s\n", e.what());
                placed.send('E');
                return 2;
            }
            uint64_t grant = 0;
            arbiter->with_ledger(
                [&](Ledger &ledger) { grant = place_on(ledger, "race:0", 1 << 20, int32_t(getpid())); });
            placed.send(grant ? 'x' : 'E');
            finish.receive();
            return grant ? 0 : 3;
        }));
    go.close_read();
    placed.close_write();
    finish.close_read();
    go.close_write();  // start them
    for (int i = 0; i < kChildren; ++i) {
        char c = 0;
        ASSERT_TRUE(placed.receive(&c));
        EXPECT_EQ(c, 'x');
    }
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);
    reader->with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(registered_count(ledger), unsigned(kChildren));
        EXPECT_EQ(live_grants(ledger), unsigned(kChildren));
        ASSERT_EQ(ledger.ndevices, 1u);
        EXPECT_EQ(ledger.devices[0].reserved_bytes, uint64_t(kChildren) << 20);
        for (const auto &c : children)
            EXPECT_EQ(grants_of(ledger, c->pid()), 1u);
    });
    finish.close_write();
    for (auto &c : children)
        EXPECT_EQ(c->wait(), 0);
    reader->with_ledger([](Ledger &ledger) {
        EXPECT_EQ(registered_count(ledger), 0u);
        EXPECT_EQ(live_grants(ledger), 0u);
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 0u);
    });
}

// The child takes the lock, places a grant, tells the parent, and stays inside fn until
// SIGKILL: the mutex is left locked by a dead owner.
void kill_child_holding_lock(const std::string &name, int32_t *dead_pid)
{
    Pipe inside;
    Child child([&]() -> int {
        inside.close_read();
        auto arbiter = open_in_child(name, "mgb");
        if (!arbiter)
            return 2;
        arbiter->with_ledger([&](Ledger &ledger) {
            place_on(ledger, "test:0", 7777, int32_t(getpid()));
            ledger.devices[0].reserved_bytes += 1;  // as if killed between two updates
            inside.send();
            for (;;)
                pause();
        });
        return 3;
    });
    inside.close_write();
    ASSERT_TRUE(inside.receive()) << "child exited early: " << child.wait();
    *dead_pid = child.pid();
    child.kill_and_wait(SIGKILL);
    EXPECT_EQ(child.last_status(), 128 + SIGKILL);
}

TEST(NodeArbiter, ChildKilledHoldingTheLockDoesNotDeadlock)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    arbiter->with_ledger([](Ledger &ledger) { ASSERT_NE(place_on(ledger, "test:0", 1000, kSelf), 0u); });
    int32_t dead = 0;
    ASSERT_NO_FATAL_FAILURE(kill_child_holding_lock(name.str(), &dead));

    bool ran = false;
    arbiter->with_ledger([&](Ledger &ledger) {  // returns: the robust mutex passed EOWNERDEAD on
        ran = true;
        expect_consistent(ledger);
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 1000u);
        EXPECT_EQ(grants_of(ledger, dead), 0u);
        EXPECT_FALSE(registered(ledger, dead));
        EXPECT_TRUE(registered(ledger, kSelf));
        EXPECT_EQ(grants_of(ledger, kSelf), 1u);
    });
    EXPECT_TRUE(ran);
    // And the mutex is usable again, by everyone.
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);
    ran = false;
    reader->with_ledger([&](Ledger &) { ran = true; });
    EXPECT_TRUE(ran);
}

TEST(NodeArbiter, StatusReaderAlsoRepairsADeadHolder)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    arbiter.reset();  // nobody registered: only the child and the reader below
    int32_t dead = 0;
    ASSERT_NO_FATAL_FAILURE(kill_child_holding_lock(name.str(), &dead));
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);
    bool ran = false;
    reader->with_ledger([&](Ledger &ledger) {
        ran = true;
        expect_consistent(ledger);
        EXPECT_EQ(live_grants(ledger), 0u);
        EXPECT_FALSE(registered(ledger, dead));
    });
    EXPECT_TRUE(ran);
}

TEST(NodeArbiter, StatusReaderGivesUpOnAStuckHolder)
{
    ScopedSegmentName name;
    Pipe inside;
    Child child([&]() -> int {
        inside.close_read();
        auto arbiter = open_in_child(name.str(), "mgb");
        if (!arbiter)
            return 2;
        arbiter->with_ledger([&](Ledger &) {
            inside.send();
            for (;;)
                pause();  // a stopped or wedged holder
        });
        return 3;
    });
    inside.close_write();
    ASSERT_TRUE(inside.receive()) << "child exited early: " << child.wait();
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);
    bool ran = false;
    reader->with_ledger([&](Ledger &) { ran = true; });  // returns after its timeout
    EXPECT_FALSE(ran);
    child.kill_and_wait(SIGKILL);
    reader->with_ledger([&](Ledger &) { ran = true; });
    EXPECT_TRUE(ran);
}

TEST(NodeArbiter, GrantsOfAChildKilledOutsideTheLockAreReclaimed)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    Pipe placed;
    Child child([&]() -> int {
        placed.close_read();
        auto mine = open_in_child(name.str(), "mgb");
        if (!mine)
            return 2;
        mine->with_ledger([&](Ledger &ledger) {
            place_on(ledger, "test:0", 3000, int32_t(getpid()));
            place_on(ledger, "test:1", 4000, int32_t(getpid()));
        });
        placed.send();  // outside the lock
        for (;;)
            pause();
    });
    placed.close_write();
    ASSERT_TRUE(placed.receive()) << "child exited early: " << child.wait();
    const int32_t dead = child.pid();
    arbiter->with_ledger([&](Ledger &ledger) { EXPECT_EQ(grants_of(ledger, dead), 2u); });
    child.kill_and_wait(SIGKILL);  // reaped: kill(pid, 0) now says ESRCH

    // A status reader (`hetpu mgb status`) already sees the dead process's grants gone...
    auto reader = NodeArbiter::open_existing(name.str());
    ASSERT_NE(reader, nullptr);
    reader->with_ledger([&](Ledger &ledger) {
        EXPECT_FALSE(registered(ledger, dead));
        EXPECT_EQ(grants_of(ledger, dead), 0u);
    });
    // ...and so does every registered locker.
    arbiter->with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(grants_of(ledger, dead), 0u);
        EXPECT_FALSE(registered(ledger, dead));
        ASSERT_EQ(ledger.ndevices, 2u);
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 0u);
        EXPECT_EQ(ledger.devices[1].reserved_bytes, 0u);
        expect_consistent(ledger);
    });
}

TEST(NodeArbiter, ForkedCopyDoesNotDetachTheParent)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    arbiter->with_ledger([](Ledger &ledger) { ASSERT_NE(place_on(ledger, "test:0", 1000, kSelf), 0u); });
    Child child([&]() -> int {
        arbiter.reset();  // the inherited copy: its destructor must leave the parent registered
        return 0;
    });
    EXPECT_EQ(child.wait(), 0);
    arbiter->with_ledger([](Ledger &ledger) {
        EXPECT_TRUE(registered(ledger, kSelf));
        EXPECT_EQ(grants_of(ledger, kSelf), 1u);
    });
}

TEST(NodeArbiter, ExceptionsAndNestedCallsAreContained)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    EXPECT_NO_THROW(arbiter->with_ledger([](Ledger &ledger) {
        ASSERT_NE(place_on(ledger, "test:0", 2048, kSelf), 0u);
        ledger.devices[0].reserved_bytes = 1;
        throw std::runtime_error("fn failed");
    }));
    bool inner = false;
    arbiter->with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 2048u);     // rebuilt after the exception
        arbiter->with_ledger([&](Ledger &) { inner = true; });  // EDEADLK: skipped, not hung
    });
    EXPECT_FALSE(inner);
    bool after = false;
    arbiter->with_ledger([&](Ledger &) { after = true; });
    EXPECT_TRUE(after);
}

// Overwrites the 32-bit word at `index` of the segment (magic 0, version 1).
void poke_header(const std::string &name, unsigned index, uint32_t value)
{
    const int fd = shm_open(name.c_str(), O_RDWR, 0);
    ASSERT_GE(fd, 0);
    struct stat st {};
    ASSERT_EQ(fstat(fd, &st), 0);
    void *p = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_NE(p, MAP_FAILED);
    static_cast<uint32_t *>(p)[index] = value;
    munmap(p, size_t(st.st_size));
}

TEST(NodeArbiter, OtherVersionIsAClearError)
{
    ScopedSegmentName name;
    ASSERT_NE(NodeArbiter::open(name.str(), "mgb"), nullptr);  // created, then detached
    ASSERT_NO_FATAL_FAILURE(poke_header(name.str(), 1, 999));
    for (bool existing : {false, true}) {
        const std::string error = ::hetpu::test::thrown_message<std::runtime_error>(
            [&] { existing ? NodeArbiter::open_existing(name.str()) : NodeArbiter::open(name.str(), "mgb"); });
        EXPECT_NE(error.find(name.str()), std::string::npos) << error;
        EXPECT_NE(error.find("version 999"), std::string::npos) << error;
        EXPECT_NE(error.find("rm /dev/shm" + name.str()), std::string::npos) << error;
        EXPECT_NE(error.find("HETPU_MGB_ARBITER"), std::string::npos) << error;
    }
}

TEST(NodeArbiter, OtherSizeIsAClearError)
{
    ScopedSegmentName name;
    const int fd = shm_open(name.str().c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 4096), 0);
    close(fd);
    ASSERT_NO_FATAL_FAILURE(poke_header(name.str(), 0, 0x12345678));
    const std::string error =
        ::hetpu::test::thrown_message<std::runtime_error>([&] { NodeArbiter::open(name.str(), "mgb"); });
    EXPECT_NE(error.find("another layout"), std::string::npos) << error;
    EXPECT_NE(error.find("4096 bytes"), std::string::npos) << error;
    EXPECT_NE(error.find("rm /dev/shm" + name.str()), std::string::npos) << error;
    EXPECT_TRUE(NodeArbiter::exists(name.str()));  // left for the user to inspect and remove
}

}  // namespace
}  // namespace hetpu::mgb
