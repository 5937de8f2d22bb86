// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC models that persist across runs (sched_policies/plbhac/core/plbhac_model_store.h): round
// trip, files that must be ignored (corrupt, other version, other key), atomic writes under
// concurrent writers, and a second simulated run that starts from the first run's models.
// No StarPU, no wall-clock assertions.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sched_policies/plbhac/core/plbhac_model_store.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"
#include "tests/unit/thrown_message.h"
#include "tools/sim/optimum.h"
#include "tools/sim/simulator.h"

using namespace hetpu;
namespace fs = std::filesystem;

namespace {

struct TempHome {
    std::string path;
    TempHome()
    {
        char tmpl[] = "/tmp/hetpu-models-test.XXXXXX";
        const char *p = mkdtemp(tmpl);
        EXPECT_NE(p, nullptr);
        path = p ? p : "";
    }
    ~TempHome()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::vector<PlannerWorker> two_workers() { return {{0, WorkerKind::Cpu, "cpu0"}, {1, WorkerKind::OpenCL, "opencl0"}}; }

// A memory as a trained planner leaves it: a linear CPU and a GPU with a fixed cost.
PlbhacMemory trained_memory()
{
    PlbhacMemory m;
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory pu;
        pu.worker = w;
        for (double x : {1024.0, 2048.0, 8192.0, 32768.0, 65536.0}) {
            const double t = w == 0 ? 2e-5 * x : 0.01 + 1e-6 * x;
            EXPECT_NO_THROW(pu.exec.add(x, t));
            EXPECT_NO_THROW(pu.transfer.add(x, w == 0 ? 0.0 : 0.001 + 1e-8 * x));
        }
        pu.size_lo = 1024;
        pu.size_hi = 65536;
        if (w == 1) {
            pu.latency = {0.0037, 0.0035, 0.0117};
            pu.home = {0.004, 0.009, 0.0031};
            pu.misses = {0.0125, -0.0371, 0.2625, -0.0098};
        }
        m.pus.push_back(std::move(pu));
    }
    return m;
}

void spit(const std::string &path, const std::string &text)
{
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}

}  // namespace

TEST(PlbhacModelStore, RoundTripGivesTheSamePredictions)
{
    TempHome home;
    const PlbhacModelKey key = plbhac_model_key("matmul", 4096, "node1", two_workers());
    const std::string path = plbhac_model_path(home.path, key);
    ASSERT_NE(path, "");
    EXPECT_EQ(path.rfind(home.path + "/plbhac-models/matmul.", 0), 0u) << path;

    PlbhacModelFile f;
    f.key = key;
    f.runs = 3;
    f.saved_unix_s = 1.7e9;
    f.memory = trained_memory();
    ASSERT_NO_THROW(save_plbhac_models(path, f));

    std::string warning;
    const auto back = load_plbhac_models(path, key, warning);
    ASSERT_TRUE(back.has_value()) << warning;
    EXPECT_EQ(warning, "");
    EXPECT_EQ(back->runs, 3u);
    EXPECT_EQ(back->saved_unix_s, 1.7e9);
    ASSERT_EQ(back->memory.pus.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const PlbhacPuMemory &a = f.memory.pus[i], &b = back->memory.pus[i];
        EXPECT_EQ(b.worker, a.worker);
        EXPECT_TRUE(b.exec.ready());
        EXPECT_EQ(b.exec.points(), a.exec.points());
        EXPECT_EQ(b.transfer.points(), a.transfer.points());
        EXPECT_EQ(b.size_lo, a.size_lo);
        EXPECT_EQ(b.size_hi, a.size_hi);
        EXPECT_EQ(b.latency, a.latency);
        EXPECT_EQ(b.home, a.home);
        EXPECT_EQ(b.misses, a.misses);
        // The saved curve's basis functions are refitted, not chosen again.
        EXPECT_EQ(b.exec.terms(), a.exec.terms());
        EXPECT_EQ(b.exec.selections(), 0u) << "worker " << i;
        for (double x : {500.0, 4096.0, 50000.0, 1e6})
            EXPECT_NEAR(b.exec.predict(x), a.exec.predict(x), 1e-9 * a.exec.predict(x) + 1e-15)
                << "worker " << i << " x " << x;
        EXPECT_NEAR(b.transfer.predict(1e5), a.transfer.predict(1e5), 1e-12);
    }
}

TEST(PlbhacModelStore, ASurpriseHeldBackIsSavedAndTheNextRunsBlockDecides)
{
    // A run of one block per PU: the OpenCL worker's block took 2x its prediction. The
    // model holds it back (a spike or a change?) and the job ends; the next run's block
    // must decide, so the held measurement travels with the file.
    PlbhacModelFile f;
    f.key = plbhac_model_key("grn", 4096, "node1", two_workers());
    f.memory = trained_memory();
    OnlineTimeModel &gpu = f.memory.pus[1].exec;
    const double x = 32768, before = gpu.predict(x);
    const size_t fitted = gpu.size();
    ASSERT_NO_THROW(gpu.add(x, 2 * before));
    ASSERT_EQ(gpu.held(), 1u) << "a 2x miss on a model of 5 points is held back";
    ASSERT_EQ(gpu.size(), fitted);

    const nlohmann::json saved = nlohmann::json::parse(plbhac_models_to_json(f));
    ASSERT_TRUE(saved["pus"][1].contains("exec_held"));
    EXPECT_EQ(saved["pus"][1]["exec_held"].size(), 1u);
    EXPECT_EQ(saved["pus"][0]["exec_held"].size(), 0u);

    // The PU really slowed down: the next run's block misses the same way, and the model
    // restarts from the two slow blocks (without the held one it would hold this one
    // back too, and predict the old speed for a third run).
    {
        PlbhacModelFile back = plbhac_models_from_json(saved.dump());
        OnlineTimeModel &m = back.memory.pus[1].exec;
        EXPECT_EQ(m.held(), 1u);
        EXPECT_EQ(m.held_points(), gpu.held_points());
        EXPECT_NEAR(m.predict(x), before, 1e-9 * before) << "held back, not fitted";
        ASSERT_NO_THROW(m.add(x, 2.05 * before));
        EXPECT_EQ(m.held(), 0u);
        EXPECT_EQ(m.size(), 2u) << "restarted from the run of two slow blocks";
        EXPECT_NEAR(m.predict(x), 2.025 * before, 0.05 * before);
    }
    // It was a spike: the next run's block is on time, the held one is dropped and the
    // old curve stays.
    {
        PlbhacModelFile back = plbhac_models_from_json(saved.dump());
        OnlineTimeModel &m = back.memory.pus[1].exec;
        ASSERT_NO_THROW(m.add(x, before));
        EXPECT_EQ(m.held(), 0u);
        EXPECT_EQ(m.size(), fitted + 1);
        EXPECT_NEAR(m.predict(x), before, 0.02 * before);
    }
    // A held measurement that is not one is a corrupt file, named as such.
    nlohmann::json bad = saved;
    bad["pus"][1]["exec_held"] = {{x, -1.0}};
    const std::string msg = test::thrown_message<std::runtime_error>([&] { plbhac_models_from_json(bad.dump()); });
    EXPECT_NE(msg.find("execution time must be positive"), std::string::npos) << msg;
    // Files written before held measurements were saved load with none.
    nlohmann::json old = saved;
    old["pus"][1].erase("exec_held");
    EXPECT_EQ(plbhac_models_from_json(old.dump()).memory.pus[1].exec.held(), 0u);
}

TEST(PlbhacModelStore, AFileWithoutLatenciesLoadsWithNone)
{
    // Files written before the per-block latency, the delay home and the misses were kept
    // have no "latency", "home" or "misses": they are still this version's files, and their
    // PUs start with none.
    PlbhacModelFile f;
    f.key = plbhac_model_key("grn", 4096, "node1", two_workers());
    f.memory = trained_memory();
    nlohmann::json j = nlohmann::json::parse(plbhac_models_to_json(f));
    for (auto &pu : j["pus"]) {
        pu.erase("latency");
        pu.erase("home");
        pu.erase("misses");
    }
    const PlbhacModelFile back = plbhac_models_from_json(j.dump());
    ASSERT_EQ(back.memory.pus.size(), 2u);
    EXPECT_TRUE(back.memory.pus[1].latency.empty());
    EXPECT_TRUE(back.memory.pus[1].home.empty());
    EXPECT_TRUE(back.memory.pus[1].misses.empty());
    EXPECT_EQ(plbhac_latency_s(back.memory.pus[1].latency), 0.0);
    EXPECT_NEAR(plbhac_latency_s(f.memory.pus[1].latency), 0.0037, 1e-12) << "the median of 3.5, 3.7, 11.7 ms";
}

TEST(PlbhacModelStore, ACurveIsChosenAgainWithoutSavedTermsOrWhenTheyNoLongerFit)
{
    PlbhacModelFile f;
    f.key = plbhac_model_key("grn", 4096, "node1", two_workers());
    f.memory = trained_memory();
    const nlohmann::json saved = nlohmann::json::parse(plbhac_models_to_json(f));
    ASSERT_TRUE(saved["pus"][1].contains("exec_terms"));

    // A file written before the terms were saved: chosen again from the points.
    nlohmann::json j = saved;
    for (auto &pu : j["pus"])
        pu.erase("exec_terms");
    PlbhacModelFile back = plbhac_models_from_json(j.dump());
    ASSERT_EQ(back.memory.pus.size(), 2u);
    EXPECT_EQ(back.memory.pus[1].exec.selections(), 1u);
    EXPECT_NEAR(back.memory.pus[1].exec.predict(50000), 0.01 + 1e-6 * 50000, 1e-3);

    // Terms that cannot fit the points (a cubic alone for a fixed cost plus a line): the
    // refit misses them, so the curve is chosen again instead of trusted.
    j = saved;
    j["pus"][1]["exec_terms"] = {"u^3"};
    back = plbhac_models_from_json(j.dump());
    EXPECT_EQ(back.memory.pus[1].exec.selections(), 1u);
    EXPECT_NE(back.memory.pus[1].exec.terms(), std::vector<BasisFn>{BasisFn::X3});
    EXPECT_NEAR(back.memory.pus[1].exec.predict(50000), 0.01 + 1e-6 * 50000, 1e-3);

    // A name this hetpu does not know makes the file unreadable, naming the worker and name.
    j = saved;
    j["pus"][1]["exec_terms"] = {"1", "u^4"};
    const std::string msg = test::thrown_message<std::runtime_error>([&] { plbhac_models_from_json(j.dump()); });
    EXPECT_NE(msg.find("exec_terms of worker 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'u^4'"), std::string::npos) << msg;
}

TEST(PlbhacModelStore, AnUnwritableDirectoryIsNamed)
{
    PlbhacModelFile f;
    f.key = plbhac_model_key("grn", 4096, "node1", two_workers());
    EXPECT_THROW_MSG(save_plbhac_models("/dev/null/models/grn.json", f), std::runtime_error,
                     "cannot create /dev/null/models: ");
}

TEST(PlbhacModelStore, AMissingFileIsNoWarning)
{
    TempHome home;
    const PlbhacModelKey key = plbhac_model_key("grn", 4096, "node1", two_workers());
    std::string warning = "stale";
    EXPECT_FALSE(load_plbhac_models(plbhac_model_path(home.path, key), key, warning).has_value());
    EXPECT_EQ(warning, "");
}

TEST(PlbhacModelStore, CorruptForeignAndOtherVersionFilesAreIgnoredWithAWarning)
{
    TempHome home;
    const PlbhacModelKey key = plbhac_model_key("kmeans", 4096, "node1", two_workers());
    const std::string path = plbhac_model_path(home.path, key);
    PlbhacModelFile f;
    f.key = key;
    f.memory = trained_memory();
    const std::string good = plbhac_models_to_json(f);

    struct Case {
        const char *what;
        std::string text;
        const char *says;
    };
    PlbhacModelFile foreign = f;
    foreign.key.host = "othernode";
    PlbhacModelFile other_workers = f;
    other_workers.key = plbhac_model_key("kmeans", 4096, "node1", {{0, WorkerKind::Cpu, "cpu0"}});
    // Another size of the same job: its elements cost otherwise (a matmul column costs m x k).
    PlbhacModelFile other_size = f;
    other_size.key.elements = 8192;
    // Written before the key held the size: it matches no run.
    std::string sizeless = good;
    const size_t at = sizeless.find("\"elements\": 4096,");
    ASSERT_NE(at, std::string::npos) << good;
    sizeless.erase(at, std::string("\"elements\": 4096,").size());
    std::string v2 = good;
    v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
    std::string negative = good;
    negative.replace(negative.find("1024.0"), 6, "-1024.0");
    std::string bad_latency = good;
    bad_latency.replace(bad_latency.find("0.0117"), 6, "-0.0117");
    std::string bad_home = good;
    bad_home.replace(bad_home.find("0.0031"), 6, "-0.0031");
    std::string bad_misses = good;
    bad_misses.replace(bad_misses.find("0.2625"), 6, "\"big\"");
    const std::vector<Case> cases = {
        {"truncated", good.substr(0, good.size() / 2), "unreadable"},
        {"empty", "", "unreadable"},
        {"not ours", "{\"format\": \"something-else\", \"version\": 1}", "not a hetpu PLB-HAC models file"},
        {"newer version", v2, "version 2"},
        {"bad point", negative, "not a measurement"},
        {"bad latency", bad_latency, "latency of worker 1"},
        {"bad delay home", bad_home, "home of worker 1"},
        {"bad misses", bad_misses, "unreadable"},
        {"another host", plbhac_models_to_json(foreign), "othernode"},
        {"another worker set", plbhac_models_to_json(other_workers), "worker set"},
        {"another size", plbhac_models_to_json(other_size), "of 8192 elements"},
        {"no size", sizeless, "of 0 elements"},
    };
    for (const Case &c : cases) {
        spit(path, c.text);
        std::string warning;
        EXPECT_FALSE(load_plbhac_models(path, key, warning).has_value()) << c.what;
        EXPECT_NE(warning.find(path), std::string::npos) << c.what << ": " << warning;
        EXPECT_NE(warning.find(c.says), std::string::npos) << c.what << ": " << warning;
        EXPECT_NE(warning.find("ignored"), std::string::npos) << c.what << ": " << warning;
    }
    // A good file written over the corrupt one is read again.
    ASSERT_NO_THROW(save_plbhac_models(path, f));
    std::string warning;
    EXPECT_TRUE(load_plbhac_models(path, key, warning).has_value()) << warning;
}

TEST(PlbhacModelStore, KeysIgnoreTheDeviceDetailsInWorkerNames)
{
    // PoCL's worker name carries the memory it reports, which follows free RAM.
    const std::vector<PlannerWorker> a = {{0, WorkerKind::OpenCL, "OpenCL 0 (pthread-x86 18.8 GiB)"},
                                          {1, WorkerKind::Cpu, "CPU 0"}};
    std::vector<PlannerWorker> b = a;
    b[0].name = "OpenCL 0 (pthread-x86 17.2 GiB)";
    EXPECT_EQ(plbhac_model_key("km", 4096, "n", a), plbhac_model_key("km", 4096, "n", b));
    EXPECT_EQ(plbhac_model_path("/h", plbhac_model_key("km", 4096, "n", a)),
              plbhac_model_path("/h", plbhac_model_key("km", 4096, "n", b)));
    b[0].kind = WorkerKind::Cuda;
    EXPECT_FALSE(plbhac_model_key("km", 4096, "n", a) == plbhac_model_key("km", 4096, "n", b))
        << "another kind is another worker";
}

TEST(PlbhacModelStore, KeysNameDistinctFilesAndBadJobNamesNone)
{
    const std::string home = "/h";
    const auto a = plbhac_model_path(home, plbhac_model_key("mm", 4096, "n1", two_workers()));
    const auto b = plbhac_model_path(home, plbhac_model_key("mm", 4096, "n2", two_workers()));
    const auto c = plbhac_model_path(home, plbhac_model_key("mm", 4096, "n1", {{0, WorkerKind::Cpu, "cpu0"}}));
    const auto d = plbhac_model_path(home, plbhac_model_key("mm", 3072, "n1", two_workers()));
    EXPECT_NE(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(a, d) << "another size of the job is another file";
    EXPECT_EQ(a, plbhac_model_path(home, plbhac_model_key("mm", 4096, "n1", two_workers()))) << "stable";
    EXPECT_EQ(plbhac_model_path(home, plbhac_model_key("../etc", 4096, "n1", two_workers())), "");
    EXPECT_EQ(plbhac_model_path(home, plbhac_model_key(".hidden", 4096, "n1", two_workers())), "");
    EXPECT_EQ(plbhac_model_path(home, plbhac_model_key("", 4096, "n1", two_workers())), "");
    EXPECT_EQ(plbhac_model_path("", plbhac_model_key("mm", 4096, "n1", two_workers())), "");
}

TEST(PlbhacModelStore, ConcurrentWritersNeverLeaveATornFile)
{
    // Writers in threads and in a child process save different, complete models to the
    // same path while a reader loads it in a loop: every load must succeed (no torn or
    // empty file is ever visible under the name) and no temporary file may be left.
    TempHome home;
    const PlbhacModelKey key = plbhac_model_key("job", 4096, "node1", two_workers());
    const std::string path = plbhac_model_path(home.path, key);
    PlbhacModelFile f;
    f.key = key;
    f.memory = trained_memory();
    ASSERT_NO_THROW(save_plbhac_models(path, f));

    constexpr int kWriters = 3, kSaves = 40;
    std::atomic<int> writers_left{kWriters};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kWriters; ++t)
        threads.emplace_back([&, t] {
            PlbhacModelFile mine = f;
            for (int i = 0; i < kSaves; ++i) {
                mine.runs = static_cast<unsigned>(1000 * t + i);
                try {
                    save_plbhac_models(path, mine);
                } catch (const std::runtime_error &) {
                    ++failures;
                }
            }
            --writers_left;
        });
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        PlbhacModelFile mine = f;
        int bad = 0;
        for (int i = 0; i < kSaves; ++i) {
            mine.runs = static_cast<unsigned>(9000 + i);
            try {
                save_plbhac_models(path, mine);
            } catch (const std::runtime_error &) {
                ++bad;
            }
        }
        _exit(bad ? 1 : 0);
    }
    int loads = 0, bad_loads = 0;
    do {
        std::string warning;
        const auto got = load_plbhac_models(path, key, warning);
        ++loads;
        if (!got || got->memory.pus.size() != 2)
            ++bad_loads;
    } while (writers_left > 0);
    for (auto &t : threads)
        t.join();
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's saves failed";
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(bad_loads, 0) << "of " << loads << " loads";
    for (const auto &e : fs::directory_iterator(fs::path(path).parent_path()))
        EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
    std::string warning;
    EXPECT_TRUE(load_plbhac_models(path, key, warning).has_value()) << warning;
}

TEST(PlbhacModelStore, ListShowsGoodAndBrokenFiles)
{
    TempHome home;
    EXPECT_TRUE(list_plbhac_models(home.path).empty());
    PlbhacModelFile f;
    f.key = plbhac_model_key("mm", 4096, "node1", two_workers());
    f.memory = trained_memory();
    ASSERT_NO_THROW(save_plbhac_models(plbhac_model_path(home.path, f.key), f));
    spit(plbhac_models_dir(home.path) + "/broken.0000000000000000.json", "{");
    const auto entries = list_plbhac_models(home.path);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_FALSE(entries[0].file.has_value());  // "broken..." sorts first
    EXPECT_NE(entries[0].error, "");
    ASSERT_TRUE(entries[1].file.has_value()) << entries[1].error;
    EXPECT_EQ(entries[1].file->key.job, "mm");
}

namespace {

// 1 CPU + 1 GPU, linear units: the GPU 10x the CPU plus a 5 ms launch cost.
sim::Scenario pair_node(double gpu_rate_factor = 1.0)
{
    sim::Scenario s;
    s.workload = 4'000'000;
    s.granule = 64;
    auto unit = [](const char *name, const char *cls, double rate, double fixed) {
        sim::UnitSpec u;
        u.name = name;
        u.unit_class = cls;
        u.profile = {{1024, fixed + 1024 / rate}, {1 << 24, fixed + (1 << 24) / rate}};
        u.noise = 0.02;
        return u;
    };
    s.units = {unit("A.cpu", "cpu", 1e5, 0), unit("A.gpu0", "gpu", 1e6 * gpu_rate_factor, 0.005)};
    return s;
}

struct StoreRun {
    double makespan_s = 0, training_s = 0;
    bool warm = false;
};

// One simulated run whose planner reads and writes the models in `home`, as the StarPU
// glue does: load when built, save when destroyed.
StoreRun run_with_store(const sim::Scenario &s, const std::string &home, uint64_t seed)
{
    const auto workers = sim::planner_workers(s);
    const PlbhacModelKey key = plbhac_model_key("pair", 4096, "sim", workers);
    const std::string path = plbhac_model_path(home, key);
    PlbhacOptions o;
    o.memory = std::make_shared<PlbhacMemory>();
    std::string warning;
    if (auto f = load_plbhac_models(path, key, warning))
        *o.memory = f->memory;
    EXPECT_EQ(warning, "");
    o.on_learnt = [&](const PlbhacMemory &m) {
        PlbhacModelFile f;
        f.key = key;
        f.memory = m;
        EXPECT_NO_THROW(save_plbhac_models(path, f));
    };
    StoreRun r;
    {
        PlbhacPlanner p(workers, sim::block_rules(s), o);
        r.warm = p.warm_started();
        r.makespan_s = sim::simulate(s, p, {seed, false}).makespan_s;
        r.training_s = p.training_s();
    }
    return r;
}

double optimum_of(const sim::Scenario &s)
{
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    return sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
}

}  // namespace

TEST(PlbhacModelStore, ASecondRunStartsFromTheSavedModelsWithoutTraining)
{
    TempHome home;
    const sim::Scenario s = pair_node();
    const double optimum = optimum_of(s);
    const StoreRun first = run_with_store(s, home.path, 1);
    const StoreRun second = run_with_store(s, home.path, 2);
    std::printf("[ models   ] first run %.3f s (training %.3f s), second %.3f s (training %.3f s), optimum %.3f s\n",
                first.makespan_s, first.training_s, second.makespan_s, second.training_s, optimum);
    EXPECT_FALSE(first.warm);
    EXPECT_GT(first.training_s, 0.0);
    EXPECT_TRUE(second.warm);
    EXPECT_EQ(second.training_s, 0.0);
    EXPECT_LE(second.makespan_s, 1.03 * optimum);
}

TEST(PlbhacModelStore, StaleModelsFromAFasterNodeAreCorrected)
{
    // The models were saved on a node whose GPU was 3x faster (a driver, a clock, another
    // card). The warm-started run mispredicts its first GPU blocks; the surprise hedge and
    // the regime-change rule must bring it back near this node's optimum.
    TempHome home;
    (void)run_with_store(pair_node(3.0), home.path, 1);
    const sim::Scenario s = pair_node(1.0);
    const StoreRun stale = run_with_store(s, home.path, 2);
    const double optimum = optimum_of(s);
    std::printf("[ models   ] stale models: %.3f s, optimum %.3f s\n", stale.makespan_s, optimum);
    EXPECT_TRUE(stale.warm);
    EXPECT_LE(stale.makespan_s, 1.10 * optimum);
    // And what it saved describes this node: a third run is as good as a cold one.
    const StoreRun third = run_with_store(s, home.path, 3);
    EXPECT_LE(third.makespan_s, 1.03 * optimum);
}

TEST(PlbhacModelStore, AWarmRunFromModelsSavedUnderASlowdownStaysNearTheColdRun)
{
    // Fig. 6's situation twice: a GPU is slowed 2.5x by a competing process from 40% of the
    // run on. The first run ends with that GPU's model in the slow regime and saves it; the
    // second starts from it while the GPU is fast again (until the slowdown): the surprise
    // hedge and the regime-change rule must bring the warm run near the cold one. (On the
    // five-machine adapt_mm_m3 scenario this still fails for some seeds: see
    // bench/README.md; this smaller node passes with and without dropping the saved
    // history at the first miss, which was tried and not kept.)
    sim::Scenario s;
    s.workload = 20'000'000;
    s.granule = 64;
    auto unit = [](const char *name, const char *cls, double rate, double fixed) {
        sim::UnitSpec u;
        u.name = name;
        u.unit_class = cls;
        u.profile = {{1024, fixed + 1024 / rate}, {1 << 26, fixed + (1 << 26) / rate}};
        u.noise = 0.02;
        return u;
    };
    s.units = {unit("A.cpu", "cpu", 1e5, 0), unit("A.gpu0", "gpu", 1e6, 0.005), unit("B.gpu0", "gpu", 8e5, 0.005)};
    s.units[1].slowdown = {{0.4 * optimum_of(s), 2.5}};
    const auto workers = sim::planner_workers(s);
    for (uint64_t seed : {1u, 2u, 3u}) {
        auto memory = std::make_shared<PlbhacMemory>();
        double makespan[2] = {0, 0};
        for (int run = 0; run < 2; ++run) {
            PlbhacOptions o;
            o.memory = memory;
            PlbhacPlanner p(workers, sim::block_rules(s), o);
            EXPECT_EQ(p.warm_started(), run == 1);
            makespan[run] = sim::simulate(s, p, {seed, false}).makespan_s;
        }
        std::printf("[ models   ] seed %u, slowdown in both runs: cold %.2f s, warm %.2f s\n",
                    static_cast<unsigned>(seed), makespan[0], makespan[1]);
        EXPECT_LE(makespan[1], 1.10 * makespan[0]) << "seed " << seed;
    }
}
