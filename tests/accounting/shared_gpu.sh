#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Processes packed on one device by mgb pay for the share they used, and their parts of the
# device's energy add up to what the device drew. The node: two PoCL devices charged as GPUs
# (HETPU_ACCOUNTING_OPENCL_AS_GPU=1), every process on device 0 (STARPU_NOPENCL=1), and the
# fake NVML library in clock mode: GPU 0 draws 100 W, GPU 1 200 W (a part measured on the
# wrong GPU would be twice too large). The fake logs every read (pid, GPU, mJ).
#
# Nothing here depends on timing: the processes start one after another, each once the one
# before holds a grant (the arbiter's grant trace says so), and every task holds its grant
# until the test creates a file (mgb_overflow --hold-until), so they all hold the device at
# once however slowly the machine runs them. The checks are exact:
#   - 2 and 3 processes, staggered, with unequal memory: every ledger row carries the device
#     counter's readings that bound its part; those readings are reads the fake logged, lie
#     within the process's own run, and the parts sum to the device's joules over the union
#     of those intervals within 1e-9;
#   - the same program alone, twice: each charged the whole device over its interval, and
#     the fraction of the allocation charge;
#   - one of three SIGKILLed while all three hold the device: no row, and the survivors'
#     parts fall short of the union of their intervals by at least the victim's part of the
#     time all three held it.
. "$(dirname "$0")/../cli/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/mgb_overflow_hetpu"
fake="$HETPU_BUILDDIR/tests/fakes/.libs/libfake_nvml.so"
for f in "$prog" "$fake"; do [ -e "$f" ] || fail "missing $f"; done
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=1 STARPU_NCPU=0
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=64 STARPU_SCHED=mgb
export HETPU_ACCOUNTING_OPENCL_AS_GPU=1 HETPU_NVML_LIBRARY="$fake" FAKE_NVML_MODE=clock FAKE_NVML_WATTS=100
unset HETPU_ACCOUNTING HETPU_ACCOUNTING_GPU_SHARE HETPU_ENERGY
# The processes hold one device at once: kernels of several processes run together under MPS
# (time-sliced, the default on OpenCL, each would wait for the others' tasks to end).
export HETPU_MGB_COLOCATION=mps
arbiter=/hetpu-acct-shared-$$
export HETPU_MGB_ARBITER=$arbiter
pids=
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT

# start NAME MIB TASKS [ARGS]: one process in the background, its ledger row in NAME.sqlite,
# the fake's reads in NAME.nvml, the arbiter's grants in NAME.trace; its pid in $last.
start() {
    name=$1 mib=$2 tasks=$3
    shift 3
    HETPU_LEDGER="$STARPU_HOME/$name.sqlite" FAKE_NVML_LOG="$STARPU_HOME/$name.nvml" \
        HETPU_MGB_TRACE="$STARPU_HOME/$name.trace" \
        "$prog" --tasks "$tasks" --mib "$mib" "$@" >"$STARPU_HOME/$name.$mib.out" 2>"$STARPU_HOME/$name.$mib.err" &
    last=$!
    pids="$pids $last"
}

# granted NAME PID: returns once the arbiter granted PID a reservation.
granted() {
    i=0
    until grep '"event":"grant"' "$STARPU_HOME/$1.trace" 2>/dev/null | grep -q "\"pid\":$2,"; do
        kill -0 "$2" 2>/dev/null || { cat "$STARPU_HOME/$1".*.err; fail "$1: process $2 ended before its grant"; }
        i=$((i + 1))
        [ $i -lt 3000 ] || fail "$1: process $2 was never granted the device"
        sleep 0.1
    done
}

# finish NAME: lets the held tasks end, then waits for every process of the batch.
finish() {
    touch "$STARPU_HOME/$1.go"
    for p in $pids; do
        wait "$p" || { cat "$STARPU_HOME/$1".*.err; fail "$1: process $p failed"; }
    done
    pids=
}

# staggered NAME MIB...: one process per MIB, each started once the one before holds a grant,
# all holding until the last is granted.
staggered() {
    name=$1
    shift
    for mib in "$@"; do
        start "$name" "$mib" 2 --hold-until "$STARPU_HOME/$name.go"
        granted "$name" "$last"
    done
    finish "$name"
}

# check NAME ROWS KIND: KIND shared, alone or killed.
check() {
    python3 - "$STARPU_HOME/$1" "$2" "$3" <<'PY' || fail "$1: see above"
import sqlite3, sys
base, rows_expected, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
con = sqlite3.connect(base + ".sqlite")
jobs = con.execute("SELECT id, su, fg, fg_allocated, gpu_share, energy_j FROM jobs ORDER BY id").fetchall()
assert len(jobs) == rows_expected, ("ledger rows", len(jobs), rows_expected)
dev = con.execute("SELECT job_id, device, peers, attached_h, share_h, fraction, device_energy_j, energy_j,"
                  " energy_source, device_from_j, device_to_j FROM job_devices ORDER BY job_id").fetchall()
assert len(dev) == rows_expected, ("one device row per job", dev)
assert all(d[1] == dev[0][1] for d in dev), ("one device shared", dev)
assert all(d[8] == "nvml" for d in dev), ("the fake NVML measured it", dev)
assert all(d[9] is not None and d[10] is not None for d in dev), ("split at the counter's readings", dev)
reads = [tuple(map(int, l.split())) for l in open(base + ".nvml") if l.strip()]
gpu0 = [r for r in reads if r[1] == 0]
logged_mj = set(r[2] for r in gpu0)
# Each part's interval: two reads of GPU 0 the fake logged, within a run of this batch.
intervals = []
for d in dev:
    lo, hi = round(d[9] * 1e3), round(d[10] * 1e3)
    assert lo in logged_mj and hi in logged_mj, ("the interval's ends are not reads of GPU 0", d)
    assert lo < hi and abs(d[6] - (hi - lo) / 1e3) <= 1e-9 * d[6], ("device joules are not its interval's", d)
    intervals.append((lo, hi))
runs = {}
for pid, gpu, mj in gpu0:
    a, b = runs.get(pid, (mj, mj))
    runs[pid] = (min(a, mj), max(b, mj))
for lo, hi in intervals:
    assert any(a <= lo and hi <= b for a, b in runs.values()), ("the interval is no process's run", lo, hi)
# The device's joules over the union of the intervals: the counter only rises.
union_mj, end = 0, None
for lo, hi in sorted(intervals):
    if end is None or lo > end:
        union_mj += hi - lo
        end = hi
    elif hi > end:
        union_mj += hi - end
        end = hi
device_j = union_mj / 1e3
joules = sum(d[7] for d in dev)
print("%s: %d rows; parts %.9g J of %.9g J (%.2e relative); fractions %s; peers %s" % (
    base.rsplit("/", 1)[-1], len(jobs), joules, device_j, joules / device_j - 1,
    [round(d[5], 3) for d in dev], [d[2] for d in dev]))
if kind == "shared":
    assert min(d[2] for d in dev) >= 1, "a process never shared the device"
    assert abs(joules - device_j) <= 1e-9 * device_j, "the parts do not add up to the device's joules"
    for j in jobs:
        assert j[4] == "use" and j[2] <= j[3] + 1e-12, ("charged more than its allocation", j)
elif kind == "alone":
    for j, d in zip(jobs, dev):
        assert d[2] == 0, ("not alone", d)
        assert abs(d[5] - 1) < 1e-9, ("alone but not charged the whole device", d)
        assert abs(j[2] - j[3]) < 1e-12, ("use-based fg differs from the allocation", j)
        assert abs(d[7] - d[6]) <= 1e-9 * d[6], ("alone but not given the device's joules", d)
    assert abs(joules - device_j) <= 1e-9 * device_j, "the parts do not add up to the device's joules"
elif kind == "killed":
    # From the moment the test saw all three granted to the kill, the victim held 12 MiB of
    # at most 60 (each process holds one or two tasks of 12 MiB, within the device's 64): a
    # fifth of the device at least (the idle rest goes by reservation), which is not the
    # survivors'.
    held_mj = 5000 + 1e5 * float(open(base + ".all_granted").read())
    killed_mj = 5000 + 1e5 * float(open(base + ".killed_at").read())
    victim_j = (killed_mj - held_mj) / 1e3 / 5
    print("killed: at least %.4g J was the victim's while all three held the device" % victim_j)
    assert min(d[2] for d in dev) >= 2, "the killed process never shared the device"
    assert victim_j > 0, "no time between the grants and the kill: no test"
    assert joules <= device_j - victim_j, "the survivors were charged the killed process's share"
    assert joules >= 0.5 * (device_j - victim_j), "the survivors were charged too little"
PY
}

now() { python3 -c 'import time; print(time.monotonic())'; }

# Two, then three processes with unequal memory, staggered.
staggered pair 4 12
check pair 2 shared
staggered trio 20 4 12
check trio 3 shared
# hetpu su report shows the shared runs and totals them per device.
hetpu="$HETPU_BUILDDIR/tools/hetpu"
"$hetpu" su report --ledger "$STARPU_HOME/trio.sqlite" >"$STARPU_HOME/report" || fail "su report"
[ "$(grep -c 'GPU charged by use: fg .*: opencl:0:0 .*shared with 2' "$STARPU_HOME/report")" -eq 3 ] ||
    { cat "$STARPU_HOME/report"; fail "su report does not show the three shared runs"; }
"$hetpu" su report --ledger "$STARPU_HOME/trio.sqlite" --by device >"$STARPU_HOME/bydev" || fail "su report --by device"
grep -Eq '^opencl:0:0 +3 +3 ' "$STARPU_HOME/bydev" || { cat "$STARPU_HOME/bydev"; fail "su report --by device"; }
# The same program alone, twice.
for n in 1 2; do
    start alone 12 2
    finish alone
done
check alone 2 alone

# SIGKILL one of three while all three hold the device; the others finish.
for mib in 12 12 12; do
    start killed "$mib" 2 --hold-until "$STARPU_HOME/killed.go"
    granted killed "$last"
    [ -n "${victim:-}" ] || victim=$last
done
now >"$STARPU_HOME/killed.all_granted"
sleep 1 # the victim's part of this second is what the check looks for
now >"$STARPU_HOME/killed.killed_at"
kill -9 "$victim"
wait "$victim" 2>/dev/null
pids=$(echo "$pids" | tr ' ' '\n' | grep -vx "$victim" | tr '\n' ' ')
finish killed
check killed 2 killed
echo "shared_gpu: ok"
