#include "sched_policies/mgb/arbiter/ledger_access.h"
