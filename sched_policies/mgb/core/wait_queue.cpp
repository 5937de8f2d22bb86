#include "sched_policies/mgb/core/wait_queue.h"
