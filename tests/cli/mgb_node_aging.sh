#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Issue 47, defect 1: node-wide aging. Process A submits 150 tasks that keep the 96 MiB device
# full; process B, started once A holds the device, submits 4. A re-fills the device from its
# own queue the moment a task ends, while B only looks every 10 ms: before the fix B got its
# first grant only after A's last. Now A is held back once it has passed B over 16 times, so
# B is granted while A still has tasks to place. Ordering only, no speed: A's 150 tasks of
# 40 ms take 6 s at least, B needs a second or two to start.
. "$(dirname "$0")/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/mgb_overflow_hetpu"
[ -e "$prog" ] || fail "missing $prog"
unset STARPU_LIMIT_OPENCL_MEM
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=0
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=8 STARPU_LIMIT_OPENCL_1_MEM=96
export HETPU_ACCOUNTING=0 STARPU_SCHED=mgb
arbiter=/hetpu-mgb-aging-$$
export HETPU_MGB_ARBITER=$arbiter HETPU_MGB_TRACE=$STARPU_HOME/trace
a=
trap '[ -n "$a" ] && kill -9 "$a" 2>/dev/null; rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT

"$prog" --tasks 150 --sleep-ms 40 >"$STARPU_HOME/a.out" 2>"$STARPU_HOME/a.err" &
a=$!
i=0
until grep -q '"event":"grant"' "$STARPU_HOME/trace" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 1200 ] || { cat "$STARPU_HOME/a.err"; fail "process A never got a device"; }; sleep 0.1
done
"$prog" --tasks 4 >"$STARPU_HOME/b.out" 2>"$STARPU_HOME/b.err" &
b=$!
wait "$b" || { cat "$STARPU_HOME/b.err"; fail "process B failed"; }
grep -q "4 tasks of 12 MiB verified" "$STARPU_HOME/b.out" || fail "process B result"
wait "$a" || { cat "$STARPU_HOME/a.err"; fail "process A failed"; }
a=
grep -q "150 tasks of 12 MiB verified" "$STARPU_HOME/a.out" || fail "process A result"
python3 - "$STARPU_HOME/trace" "$b" <<'PY' || fail "process B starved (see above)"
import json, sys
b = int(sys.argv[2])
grants = [json.loads(l) for l in open(sys.argv[1])]
grants = [g for g in grants if g["event"] == "grant"]
first_b = next(i for i, g in enumerate(grants) if g["pid"] == b)
a_after = sum(1 for g in grants[first_b:] if g["pid"] != b)
assert a_after > 0, "B's first grant came after A's last: B waited for A to finish"
print("B's first grant is grant %d of %d; A was granted %d more after it" % (first_b + 1, len(grants), a_after))
PY
echo "mgb_node_aging: ok"
