#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Processes under different STARPU_LIMIT_OPENCL_1_MEM share the 96 MiB
# device through the arbiter. The one with a 16 MiB limit is held to it, and the device keeps
# the 96 MiB of the other: before the fix it shrank to 16 MiB for both, for good.
# Timing: process A runs 4 tasks of 8 s; B needs well under that (2 tasks, no sleep). If A
# ends first anyway (a machine many times slower than expected), the test says so.
. "$(dirname "$0")/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/mgb_overflow_hetpu"
hetpu="$HETPU_BUILDDIR/tools/hetpu"
for f in "$prog" "$hetpu"; do [ -e "$f" ] || fail "missing $f"; done
unset STARPU_LIMIT_OPENCL_MEM
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=0
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=8 HETPU_ACCOUNTING=0 STARPU_SCHED=mgb
# B must run beside A on one device: processes share a device at once under MPS (time-sliced,
# the default on OpenCL, B would wait for A's tasks to end).
export HETPU_MGB_COLOCATION=mps
arbiter=/hetpu-mgb-limits-$$
export HETPU_MGB_ARBITER=$arbiter HETPU_MGB_TRACE=$STARPU_HOME/trace
a=
trap '[ -n "$a" ] && kill -9 "$a" 2>/dev/null; rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT

STARPU_LIMIT_OPENCL_1_MEM=96 "$prog" --tasks 4 --sleep-ms 8000 >"$STARPU_HOME/a.out" 2>"$STARPU_HOME/a.err" &
a=$!
i=0
until grep -q '"event":"grant"' "$STARPU_HOME/trace" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 1200 ] || { cat "$STARPU_HOME/a.err"; fail "process A never got a device"; }; sleep 0.1
done
STARPU_LIMIT_OPENCL_1_MEM=16 timeout 120 "$prog" --tasks 2 >"$STARPU_HOME/b.out" 2>"$STARPU_HOME/b.err" &
b=$!
wait "$b" || { cat "$STARPU_HOME/b.err"; fail "process B (16 MiB limit) failed"; }
grep -q "2 tasks of 12 MiB verified" "$STARPU_HOME/b.out" || fail "process B result"
kill -0 "$a" 2>/dev/null || fail "process A ended before B: the machine is far slower than this test assumes"
"$hetpu" mgb status --json >"$STARPU_HOME/status" || fail "mgb status"
python3 - "$STARPU_HOME/status" "$STARPU_HOME/trace" "$a" <<'PY' || fail "capacity or limits wrong (see above)"
import json, sys
status = json.load(open(sys.argv[1]))
caps = sorted(d["capacity_bytes"] for d in status["devices"])
assert caps[-1] == 96 << 20, ("the 96 MiB device was shrunk by the 16 MiB process", caps)
for d in status["devices"]:
    assert d["reserved_bytes"] <= d["capacity_bytes"], d
a = int(sys.argv[3])  # B ran under timeout: its pid is the one that is not A's
grants = [json.loads(l) for l in open(sys.argv[2])]
mine = [g for g in grants if g["pid"] != a and g["event"] == "grant"]
assert mine, "process B was never granted a device"
live = 0
for g in grants:
    if g["pid"] != a:
        live += g["bytes"] if g["event"] == "grant" else -g["bytes"]
        assert live <= 16 << 20, ("process B held more than its own 16 MiB", g)
print("capacities", caps, "; B granted %d times within its 16 MiB" % len(mine))
PY
kill -9 "$a" 2>/dev/null; wait "$a" 2>/dev/null; a=
echo "mgb_mixed_limits: ok"
