# SPDX-License-Identifier: LGPL-2.1-or-later
# HDSS: the policy (StarPU glue) and its planner's pure core, compiled into
# runtime/libhetpu_core.la.
libhetpu_la_SOURCES += sched_policies/hdss/hdss.cpp
runtime_libhetpu_core_la_SOURCES += sched_policies/hdss/core/hdss_planner.cpp sched_policies/hdss/core/hdss_planner.h
