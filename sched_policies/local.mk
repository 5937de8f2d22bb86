# SPDX-License-Identifier: LGPL-2.1-or-later
# One file per policy; each registers itself with HETPU_REGISTER_POLICY. Each family
# (plbhac/, hdss/, pareto/, mgb/) has its own folder and local.mk; what they share is here.
hetpu_policy_sources = \
	sched_policies/central_queue.cpp sched_policies/central_queue.h \
	sched_policies/greedy.cpp
# Pure cores of the policies (no StarPU), compiled into runtime/libhetpu_core.la.
hetpu_core_sources =

include sched_policies/plbhac/local.mk
include sched_policies/hdss/local.mk
include sched_policies/pareto/local.mk
