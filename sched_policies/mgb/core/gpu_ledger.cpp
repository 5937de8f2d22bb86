#include "sched_policies/mgb/core/gpu_ledger.h"
