# SPDX-License-Identifier: LGPL-2.1-or-later
# One file per policy; each registers itself with HETPU_REGISTER_POLICY. Each family
# (plbhac/, hdss/, pareto/, mgb/) has its own folder and local.mk; what they share is here.
libhetpu_la_SOURCES += \
	sched_policies/central_queue.cpp sched_policies/central_queue.h \
	sched_policies/greedy.cpp
# Each family adds its StarPU glue to libhetpu.la and its pure core (no StarPU) to
# runtime/libhetpu_core.la.

include sched_policies/plbhac/local.mk
include sched_policies/hdss/local.mk
include sched_policies/pareto/local.mk
