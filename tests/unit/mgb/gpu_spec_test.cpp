#include <gtest/gtest.h>

#include "sched_policies/mgb/core/gpu_spec.h"
