# The node-wide MGB arbiter (POSIX shared memory, robust mutex) and the process-local
# ledger behind the same interface. No StarPU.
noinst_LTLIBRARIES += sched_policies/mgb/arbiter/libhetpu_mgb_arbiter.la
sched_policies_mgb_arbiter_libhetpu_mgb_arbiter_la_SOURCES = \
	sched_policies/mgb/arbiter/ledger_access.cpp sched_policies/mgb/arbiter/ledger_access.h \
	sched_policies/mgb/arbiter/node_arbiter.cpp sched_policies/mgb/arbiter/node_arbiter.h
sched_policies_mgb_arbiter_libhetpu_mgb_arbiter_la_LIBADD = sched_policies/mgb/core/libhetpu_mgb_core.la -lrt -lpthread
