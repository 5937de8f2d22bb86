#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# MGB on a real heterogeneous node: two OpenCL devices (PoCL) with unequal memory limits and
# one CPU worker. Tasks of 12 MiB overflow the 8 MiB device: the mgb policies must never
# place one there, and must complete with verified results, through hetpu_init() and
# through the preload library on an unmodified StarPU program; processes sharing the node
# go through the node-wide arbiter and never reserve more than a device holds.
. "$(dirname "$0")/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/mgb_overflow"
prog_hetpu="$HETPU_BUILDDIR/tests/programs/mgb_overflow_hetpu"
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
hetpu="$HETPU_BUILDDIR/tools/hetpu"
for f in "$prog" "$prog_hetpu" "$preload" "$hetpu"; do [ -e "$f" ] || fail "missing $f"; done

# StarPU's global limit would override the per-device ones (see the design notes).
unset STARPU_LIMIT_OPENCL_MEM
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=8 STARPU_LIMIT_OPENCL_1_MEM=96
export HETPU_ACCOUNTING=0
arbiter=/hetpu-mgb-test-$$
export HETPU_MGB_ARBITER=$arbiter
trap 'rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT
out=$STARPU_HOME/out; err=$STARPU_HOME/err

# Ledger invariant over a grant trace: node-wide reservations never above capacity, and
# nothing ever granted on the small device for these tasks.
check_trace() {
    python3 - "$1" "$2" <<'PY' || fail "trace $1"
import json, sys
path, min_pids = sys.argv[1], int(sys.argv[2])
lines = [json.loads(l) for l in open(path)]
grants = [l for l in lines if l["event"] == "grant"]
assert grants, "no grant in the trace"
for l in lines:
    assert l["reserved_bytes"] <= l["capacity"], l
    assert not (l["event"] == "grant" and l["capacity"] < l["bytes"]), l
pids = {l["pid"] for l in grants}
assert len(pids) >= min_pids, (pids, min_pids)
releases = sum(1 for l in lines if l["event"] == "release")
assert releases == len(grants), (releases, len(grants))
print("trace %s: %d grants by %d process(es), peak %.1f MiB" % (path, len(grants), len(pids),
      max(l["reserved_bytes"] for l in lines) / 2**20))
PY
}

# 1. hetpu_init(), declared launch sizes: every policy of the family completes, verified.
for p in mgb mgb-exact sa cg; do
    rm -f "$STARPU_HOME/trace"
    HETPU_MGB_TRACE=$STARPU_HOME/trace STARPU_SCHED=$p timeout 120 "$prog_hetpu" --tasks 16 >"$out" 2>"$err" \
        || { cat "$err"; fail "$p via hetpu_init"; }
    grep -q "16 tasks of 12 MiB verified" "$out" || { cat "$out" "$err"; fail "$p result"; }
    check_trace "$STARPU_HOME/trace" 1
done

# 2. The preload library on the unmodified program (no declared needs).
for p in mgb mgb-exact; do
    LD_PRELOAD=$preload STARPU_SCHED=$p timeout 120 "$prog" --tasks 16 >"$out" 2>"$err" \
        || { cat "$err"; fail "$p via preload"; }
    grep -q "16 tasks of 12 MiB verified" "$out" || { cat "$out" "$err"; fail "$p preload result"; }
done

# 3. A task larger than every device (128 MiB): on the CPU when it has a CPU version, else a
#    clear error at once, never a hang.
STARPU_SCHED=mgb timeout 120 "$prog_hetpu" --tasks 2 --mib 128 --cpu >"$out" 2>"$err" || { cat "$err"; fail "big task with a CPU version"; }
grep -q "2 tasks of 128 MiB verified" "$out" || fail "big task result"
if STARPU_SCHED=mgb timeout 120 "$prog_hetpu" --tasks 1 --mib 128 >"$out" 2>"$err"; then fail "an impossible task was accepted"; fi
grep -q "task 'add_one' needs 128.0 MiB of device memory" "$err" && grep -q "largest: opencl:0:1" "$err" \
    && grep -q "no CPU implementation" "$err" || { cat "$err"; fail "no clear error for the impossible task"; }
if LD_PRELOAD=$preload STARPU_SCHED=mgb-exact timeout 120 "$prog" --tasks 1 --mib 128 >"$out" 2>"$err"; then fail "preload: impossible task accepted"; fi
grep -q "needs 128.0 MiB" "$err" || { cat "$err"; fail "preload: no clear error"; }

# 4. StarPU's eager on one 8 MiB device and a 12 MiB task: it hangs (StarPU retries eviction
#    forever); the timeout is the proof. mgb on the same node stops with the error at once.
STARPU_NOPENCL=1 STARPU_SCHED=eager timeout 10 "$prog_hetpu" --tasks 1 >"$out" 2>"$err"
rc=$?
[ "$rc" -eq 124 ] || { cat "$err"; fail "eager was expected to hang (timeout 124), got $rc"; }
if STARPU_NOPENCL=1 STARPU_SCHED=mgb timeout 60 "$prog_hetpu" --tasks 1 >"$out" 2>"$err"; then fail "mgb accepted the 12 MiB task on the 8 MiB device"; fi
grep -q "needs 12.0 MiB" "$err" || { cat "$err"; fail "mgb: no clear error on the one small device"; }

# 5. Two and three processes at once share the devices through the arbiter.
for n in 2 3; do
    rm -f "$STARPU_HOME/trace"
    pids=
    i=0
    while [ $i -lt $n ]; do
        HETPU_MGB_TRACE=$STARPU_HOME/trace STARPU_SCHED=mgb timeout 120 "$prog_hetpu" --tasks 8 --sleep-ms 20 \
            >"$out.$i" 2>"$err.$i" &
        pids="$pids $!"
        i=$((i + 1))
    done
    i=0
    for pid in $pids; do
        wait "$pid" || { cat "$err.$i"; fail "process $i of $n"; }
        grep -q "8 tasks of 12 MiB verified" "$out.$i" || fail "process $i of $n result"
        i=$((i + 1))
    done
    check_trace "$STARPU_HOME/trace" "$n"
done

# 6. A process killed mid-run leaves no reservation behind.
rm -f "$STARPU_HOME/trace"
HETPU_MGB_TRACE=$STARPU_HOME/trace STARPU_SCHED=mgb "$prog_hetpu" --tasks 8 --sleep-ms 2000 >"$out" 2>"$err" &
victim=$!
i=0
until grep -q '"event":"grant"' "$STARPU_HOME/trace" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 1200 ] || fail "the victim never got a device"; sleep 0.1
done
"$hetpu" mgb status --json >"$out" || fail "status while running"
python3 -c "import json,sys; s=json.load(open('$out')); assert any(d['reserved_bytes'] > 0 for d in s['devices']), s" \
    || fail "no reservation seen while the victim runs"
kill -9 "$victim"; wait "$victim" 2>/dev/null
"$hetpu" mgb status --json >"$out" || fail "status after the kill"
python3 -c "
import json; s = json.load(open('$out'))
assert all(d['reserved_bytes'] == 0 and d['tasks'] == 0 for d in s['devices']), s
assert not any(p['pid'] == $victim for p in s['processes']), s
" || { cat "$out"; fail "stale reservation after kill -9"; }
STARPU_SCHED=mgb timeout 120 "$prog_hetpu" --tasks 8 >"$out" 2>"$err" || { cat "$err"; fail "run after the kill"; }
echo "mgb_node: ok"
