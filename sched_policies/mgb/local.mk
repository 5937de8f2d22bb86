# MGB's StarPU policies (mgb, mgb-exact, sa, cg): thin glue over sched_policies/mgb/core.
