#include "sched_policies/mgb/core/task_needs.h"
