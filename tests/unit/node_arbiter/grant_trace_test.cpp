// SPDX-License-Identifier: LGPL-2.1-or-later
// GrantTrace: JSON lines appended by several threads and processes to one file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "node_arbiter/grant_trace.h"
#include "tests/unit/node_arbiter/arbiter_test_util.h"
#include "tests/unit/thrown_message.h"

namespace hetpu::mgb {
namespace {

using test::Child;

// A private temporary directory, removed with its files at the end.
class TempDir {
public:
    TempDir()
    {
        std::string tmpl = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/hetpu-trace.XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data()))
            path_ = buf.data();
    }
    ~TempDir()
    {
        if (!path_.empty() && std::system(("rm -rf '" + path_ + "'").c_str()) != 0)
            std::fprintf(stderr, "cannot remove %s\n", path_.c_str());
    }
    const std::string &path() const { return path_; }

private:
    std::string path_;
};

std::vector<nlohmann::json> read_lines(const std::string &path)
{
    std::vector<nlohmann::json> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
        out.push_back(j);
    }
    return out;
}

TEST(GrantTrace, LineHasTheDocumentedFieldsAndExactTime)
{
    TraceRecord r;
    r.event = TraceEvent::Refuse;
    r.pid = 4242;
    r.device = "cuda:0000:3b:00.0";
    r.bytes = 1ull << 40;
    r.warps = 640;
    r.reserved_bytes = 123456789012345ull;
    r.capacity = 17179869184ull;
    r.policy = "mgb";
    r.t = 1718000000.123456789;
    const std::string line = GrantTrace::to_json(r);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.rfind("{\"t\":", 0), 0u) << line;  // documented order, time first
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("t").get<double>(), r.t);  // round trip exact
    EXPECT_EQ(j.at("event"), "refuse");
    EXPECT_EQ(j.at("pid"), 4242);
    EXPECT_EQ(j.at("device"), "cuda:0000:3b:00.0");
    EXPECT_EQ(j.at("bytes").get<uint64_t>(), 1ull << 40);
    EXPECT_EQ(j.at("warps"), 640);
    EXPECT_EQ(j.at("reserved_bytes").get<uint64_t>(), 123456789012345ull);
    EXPECT_EQ(j.at("capacity").get<uint64_t>(), 17179869184ull);
    EXPECT_EQ(j.at("policy"), "mgb");
    EXPECT_EQ(j.size(), 9u);

    r.t = 0;                               // stamped now
    r.device = std::string("bad\xff", 4);  // not UTF-8: replaced, not thrown
    const auto k = nlohmann::json::parse(GrantTrace::to_json(r));
    EXPECT_GT(k.at("t").get<double>(), 1.6e9);
    EXPECT_EQ(std::string(trace_event_name(TraceEvent::Grant)), "grant");
    EXPECT_EQ(std::string(trace_event_name(TraceEvent::Release)), "release");
}

TEST(GrantTrace, RecordTakesReservationFromTheLedger)
{
    auto ledger = std::make_unique<Ledger>();
    ledger_init(*ledger);
    ASSERT_NE(test::place_on(*ledger, "test:0", 5000, 7), 0u);
    const TraceRecord r = trace_record(*ledger, TraceEvent::Grant, 0, 7, 5000, 4, "mgb");
    EXPECT_EQ(r.device, "test:0");
    EXPECT_EQ(r.reserved_bytes, 5000u);
    EXPECT_EQ(r.capacity, test::small_gpu().memory_bytes);
    const TraceRecord none = trace_record(*ledger, TraceEvent::Refuse, -1, 7, 5000, 4, "mgb");
    EXPECT_EQ(none.device, "");
    EXPECT_EQ(none.capacity, 0u);
}

TEST(GrantTrace, OpenFailureAndEnvironment)
{
    EXPECT_THROW_MSG(GrantTrace::open("/nonexistent-dir/trace.jsonl"), std::runtime_error,
                     "cannot open MGB trace /nonexistent-dir/trace.jsonl: No such file or directory");
    const char *old = std::getenv("HETPU_MGB_TRACE");
    const std::string saved = old ? old : "";
    unsetenv("HETPU_MGB_TRACE");
    EXPECT_EQ(GrantTrace::from_environment(), nullptr);
    TempDir dir;
    const std::string path = dir.path() + "/env.jsonl";
    setenv("HETPU_MGB_TRACE", path.c_str(), 1);
    auto trace = GrantTrace::from_environment();
    ASSERT_NE(trace, nullptr);
    EXPECT_EQ(trace->path(), path);
    if (old)
        setenv("HETPU_MGB_TRACE", saved.c_str(), 1);
    else
        unsetenv("HETPU_MGB_TRACE");
}

TEST(GrantTrace, ThreadsAndProcessesShareOneFileLineByLine)
{
    TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    const std::string path = dir.path() + "/trace.jsonl";
    constexpr int kThreads = 4, kPerThread = 250, kProcesses = 3, kPerProcess = 200;
    // Long policy and device strings make torn lines likely if writes were split.
    const std::string long_key(200, 'k');
    {
        auto trace = GrantTrace::open(path);
        ASSERT_NE(trace, nullptr);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                for (int i = 0; i < kPerThread; ++i) {
                    TraceRecord r;
                    r.event = TraceEvent::Grant;
                    r.pid = 1000 + t;
                    r.device = long_key;
                    r.bytes = uint64_t(i);
                    r.policy = "thread";
                    EXPECT_TRUE(trace->write(r));
                }
            });
        std::vector<std::unique_ptr<Child>> children;
        for (int p = 0; p < kProcesses; ++p)
            children.push_back(std::make_unique<Child>([&, p]() -> int {
                std::unique_ptr<GrantTrace> mine;
                try {
                    mine = GrantTrace::open(path);  // each process opens the file itself
                } catch (const std::runtime_error &) {
                    return 2;  // an exception would abort the forked child instead
                }
                for (int i = 0; i < kPerProcess; ++i) {
                    TraceRecord r;
                    r.event = TraceEvent::Release;
                    r.pid = 2000 + p;
                    r.device = long_key;
                    r.bytes = uint64_t(i);
                    r.policy = "process";
                    if (!mine->write(r))
                        return 3;
                }
                return 0;
            }));
        for (auto &th : threads)
            th.join();
        for (auto &c : children)
            EXPECT_EQ(c->wait(), 0);
    }
    const auto lines = read_lines(path);
    ASSERT_EQ(lines.size(), size_t(kThreads * kPerThread + kProcesses * kPerProcess));
    std::map<int, int> per_pid;
    for (const auto &j : lines) {
        ASSERT_TRUE(j.is_object());
        EXPECT_EQ(j.at("device"), long_key);
        ++per_pid[j.at("pid").get<int>()];
    }
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(per_pid[1000 + t], kPerThread);
    for (int p = 0; p < kProcesses; ++p)
        EXPECT_EQ(per_pid[2000 + p], kPerProcess);
}

}  // namespace
}  // namespace hetpu::mgb
