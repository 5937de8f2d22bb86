# One file per policy; each registers itself with HETPU_REGISTER_POLICY.
hetpu_policy_sources = \
	sched_policies/greedy.cpp
