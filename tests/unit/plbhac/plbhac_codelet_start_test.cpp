// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: a first run started from StarPU's calibration of the job's codelet.
#include "sched_policies/plbhac/core/plbhac_codelet_start.h"

#include <cmath>
#include <limits>

#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

namespace {

// StarPU's expectations for a CPU (1e-4 s per element) and an accelerator 10x faster with a
// launch cost, calibrated at the fixed block 25,000 and the remainder 12,480 only.
BlockRules calibrated(uint64_t total, bool accelerator_calibrated = true)
{
    BlockRules r = rules(total);
    r.calibrated_sizes = {25000, 12480, 0, total + 1};  // 0 and oversized: not usable sizes
    r.codelet_expected_s = [accelerator_calibrated](int worker, uint64_t count) {
        if (count != 25000 && count != 12480)
            return std::numeric_limits<double>::quiet_NaN();  // StarPU never saw that size
        const double x = static_cast<double>(count);
        if (worker == 0)
            return 1e-4 * x;
        return accelerator_calibrated ? 2e-3 + 1e-5 * x : std::numeric_limits<double>::quiet_NaN();
    };
    return r;
}

}  // namespace

TEST(PlbhacCodeletStart, EveryWorkerCalibratedStartsTrainedAndSizedByStarpusTimes)
{
    const uint64_t total = 1'000'000;
    PlbhacOptions o;
    o.x_init = 4096;
    o.memory = std::make_shared<PlbhacMemory>();
    ASSERT_TRUE(plbhac_memory_from_codelet_model(workers(2), calibrated(total), *o.memory));
    ASSERT_EQ(o.memory->pus.size(), 2u);
    for (const PlbhacPuMemory &m : o.memory->pus) {
        EXPECT_EQ(m.exec.size(), 2u) << "both calibrated sizes, nothing else";
        EXPECT_EQ(m.size_lo, 12480.0);
        EXPECT_EQ(m.size_hi, 25000.0);
    }
    EXPECT_NEAR(o.memory->pus[1].exec.predict(25000), 2e-3 + 0.25, 1e-9);

    PlbhacPlanner planner(workers(2), rules(total), o);
    EXPECT_TRUE(planner.warm_started());
    EXPECT_FALSE(planner.training());
    const uint64_t cpu = planner.next_block(0, total), accel = planner.next_block(1, total);
    EXPECT_NE(cpu, o.x_init) << "no training block";
    EXPECT_GT(static_cast<double>(accel) / static_cast<double>(cpu), 8.0) << "split by StarPU's 10:1 rates";
}

TEST(PlbhacCodeletStart, AWorkerStarpuNeverCalibratedMeansTraining)
{
    const uint64_t total = 1'000'000;
    PlbhacMemory memory;
    memory.pus.emplace_back();  // must survive a refusal untouched
    memory.pus.back().worker = 7;
    EXPECT_FALSE(plbhac_memory_from_codelet_model(workers(2), calibrated(total, false), memory));
    ASSERT_EQ(memory.pus.size(), 1u);
    EXPECT_EQ(memory.pus[0].worker, 7);

    BlockRules none = rules(total);  // a multi-rank runner sets no estimator
    none.calibrated_sizes = {25000};
    EXPECT_FALSE(plbhac_memory_from_codelet_model(workers(2), none, memory));

    PlbhacOptions o;
    o.x_init = 4096;
    PlbhacPlanner planner(workers(2), rules(total), o);
    EXPECT_FALSE(planner.warm_started());
    EXPECT_EQ(planner.next_block(0, total), 4096u);
}
