#include "sched_policies/mgb/arbiter/node_arbiter.h"
