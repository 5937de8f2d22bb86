# SPDX-License-Identifier: LGPL-2.1-or-later
# HDSS: its planner's pure core, compiled into runtime/libhetpu_core.la and registered in
# sched_policies/planner_catalog.cpp.
runtime_libhetpu_core_la_SOURCES += sched_policies/hdss/core/hdss_planner.cpp sched_policies/hdss/core/hdss_planner.h
