// SPDX-License-Identifier: LGPL-2.1-or-later
// The entry points StarPU 1.4 looks up when STARPU_SCHED_LIB names a library:
//   STARPU_SCHED_LIB=libhetpu.so STARPU_SCHED=greedy ./program
// StarPU 1.3 ignores STARPU_SCHED_LIB; use hetpu_init() or the preload library there.
// tests/cli/sched_lib.sh runs an unmodified program this way on 1.4.
#include "runtime/start/starpu_compat.h"

#include <mutex>
#include <vector>

#include "runtime/start/policy_registry.h"

extern "C" struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name)
{
    if (!name)
        return nullptr;
    const hetpu::RegisteredPolicy *r = hetpu::find_registered_policy(name);
    return r ? r->policy : nullptr;
}

extern "C" struct starpu_sched_policy **starpu_get_sched_lib_policies(void)
{
    static std::vector<struct starpu_sched_policy *> list;
    static std::once_flag once;
    std::call_once(once, [] {
        for (const auto &r : hetpu::registered_policies())
            list.push_back(r.policy);
        list.push_back(nullptr);
    });
    return list.data();
}
