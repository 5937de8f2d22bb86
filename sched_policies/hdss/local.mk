# SPDX-License-Identifier: LGPL-2.1-or-later
# HDSS: the policy (StarPU glue) and its planner's pure core, compiled into
# runtime/libhetpu_core.la.
hetpu_policy_sources += sched_policies/hdss/hdss.cpp
hetpu_core_sources += sched_policies/hdss/core/hdss_planner.cpp sched_policies/hdss/core/hdss_planner.h
