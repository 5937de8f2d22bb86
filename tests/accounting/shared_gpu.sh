#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Processes packed on one device by mgb pay for the share they used, and the shares
# add up to the device. The node: two PoCL devices charged as GPUs
# (HETPU_ACCOUNTING_OPENCL_AS_GPU=1), every process on device 0 (STARPU_NOPENCL=1), and the
# fake NVML library in clock mode: GPU 0 draws 100 W, GPU 1 200 W (a share measured on the
# wrong GPU would be twice too large). The fake logs every read (pid, GPU, mJ), which gives
# the interval each process measured: the checks compare the ledger rows with what the
# device drew over the union of those intervals, so they hold however slowly the machine
# runs the jobs (nothing here depends on timing).
#   - 2 and 3 processes at once: GPU share-hours sum to at most the device-hours of the
#     interval; their joules sum to the device's joules within 1%;
#   - the same jobs one at a time: each alone on the device, charged the whole of it, i.e.
#     exactly what the allocation charge gives;
#   - a SIGKILLed process: no row, and the survivors are not charged its share.
. "$(dirname "$0")/../cli/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/mgb_overflow_hetpu"
fake="$HETPU_BUILDDIR/tests/fakes/.libs/libfake_nvml.so"
for f in "$prog" "$fake"; do [ -e "$f" ] || fail "missing $f"; done
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=1 STARPU_NCPU=0
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=64 STARPU_SCHED=mgb
export HETPU_ACCOUNTING_OPENCL_AS_GPU=1 HETPU_NVML_LIBRARY="$fake" FAKE_NVML_MODE=clock FAKE_NVML_WATTS=100
unset HETPU_ACCOUNTING HETPU_ACCOUNTING_GPU_SHARE HETPU_ENERGY
arbiter=/hetpu-acct-shared-$$
export HETPU_MGB_ARBITER=$arbiter
pids=
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT

# run NAME N [TASKS]: N processes at once (TASKS, default 2, of 12 MiB sleeping 1.5 s each), each its own ledger
# row in $STARPU_HOME/NAME.sqlite and its own fake-NVML log.
run_batch() {
    name=$1 n=$2 tasks=${3:-2}
    pids=
    i=0
    while [ "$i" -lt "$n" ]; do
        HETPU_LEDGER="$STARPU_HOME/$name.sqlite" FAKE_NVML_LOG="$STARPU_HOME/$name.nvml" \
            timeout 300 "$prog" --tasks "$tasks" --sleep-ms 1500 >"$STARPU_HOME/$name.$i.out" 2>"$STARPU_HOME/$name.$i.err" &
        pids="$pids $!"
        i=$((i + 1))
    done
    i=0
    for p in $pids; do
        wait "$p" || { cat "$STARPU_HOME/$name.$i.err"; fail "$name: process $i failed"; }
        i=$((i + 1))
    done
    pids=
}

# check NAME ROWS KIND: KIND shared (at least two ran at once) or alone (each had the device).
check() {
    python3 - "$STARPU_HOME/$1.sqlite" "$STARPU_HOME/$1.nvml" "$2" "$3" <<'PY' || fail "$1: see above"
import sqlite3, sys
db, log, rows_expected, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
con = sqlite3.connect(db)
jobs = con.execute("SELECT id, su, fg, fg_allocated, gpu_share, energy_j FROM jobs ORDER BY id").fetchall()
assert len(jobs) == rows_expected, ("ledger rows", len(jobs), rows_expected)
dev = con.execute("SELECT job_id, device, peers, attached_h, share_h, fraction, device_energy_j, energy_j,"
                  " energy_source FROM job_devices ORDER BY job_id").fetchall()
assert len(dev) == rows_expected, ("one device row per job", dev)
assert all(d[1] == dev[0][1] for d in dev), ("one device shared", dev)
assert all(d[8] == "nvml" for d in dev), ("the fake NVML measured it", dev)
# The interval: from the first to the last read of GPU 0 by any process (clock mode: mJ).
reads = [tuple(map(int, l.split())) for l in open(log) if l.strip()]
gpu0 = [r for r in reads if r[1] == 0]
first, last = min(r[2] for r in gpu0), max(r[2] for r in gpu0)
device_j = (last - first) / 1e3
device_h = device_j / 100.0 / 3600.0  # 100 W
share_h = sum(d[4] for d in dev)
joules = sum(d[7] for d in dev)
print("%s: %d rows; share-h %.6g of %.6g device-h; joules %.4g of %.4g (%.3f%%); fractions %s; peers %s" % (
    db.rsplit("/", 1)[-1], len(jobs), share_h, device_h, joules, device_j, 100 * (joules / device_j - 1),
    [round(d[5], 3) for d in dev], [d[2] for d in dev]))
assert share_h <= device_h * (1 + 1e-9), "share-hours exceed the device-hours of the interval"
if kind == "shared":
    assert max(d[2] for d in dev) >= 1, "nobody shared the device: the jobs did not overlap"
    assert abs(joules - device_j) <= 0.01 * device_j, "joules do not add up to the device's within 1%"
    for j in jobs:
        assert j[4] == "use" and j[2] <= j[3] + 1e-12, ("charged more than its allocation", j)
elif kind == "alone":
    for j, d in zip(jobs, dev):
        assert d[2] == 0, ("not alone", d)
        assert abs(d[5] - 1) < 1e-9, ("alone but not charged the whole device", d)
        assert abs(j[2] - j[3]) < 1e-12, ("use-based fg differs from the allocation (today's)", j)
        assert abs(d[7] - d[6]) <= 1e-9 * d[6], ("alone but not given the device's joules", d)
        assert abs(d[6] - 100 * d[3] * 3600) <= 0.05 * d[6], ("device joules are not its own GPU's", d)
elif kind == "killed":
    # Within the survivors' own interval the victim held a third of the device from the
    # moment all three had started until its death: that part is not the survivors'.
    victim = int(open(log + ".victim").read())
    killed_mj = 5000 + 1e5 * float(open(log + ".killed_at").read())  # the fake's clock at the kill
    surv = [r for r in gpu0 if r[0] != victim]
    s_first, s_last = min(r[2] for r in surv), max(r[2] for r in surv)
    all_started = max(min(r[2] for r in gpu0 if r[0] == p) for p in set(r[0] for r in gpu0))
    victim_j = max(0.0, (killed_mj - all_started) / 1e3) / 3
    surv_j = (s_last - s_first) / 1e3
    print("killed: survivors %.4g J of %.4g J over their interval; the victim's third while all ran %.4g J" % (
        joules, surv_j, victim_j))
    assert max(d[2] for d in dev) >= 2, "the killed process never shared the device"
    assert victim_j > 0.05 * surv_j, "the victim died before the others got going: no test"
    assert joules <= surv_j - 0.9 * victim_j, "the survivors were charged the killed process's share"
    assert joules >= 0.5 * (surv_j - victim_j), "the survivors were charged too little"
PY
}

# 3 tasks each: the hook's few ms outside the arbiter (StarPU's start, the scheduler's
# deinit) stay well under 1% of the runs.
run_batch pair 2 3
check pair 2 shared
run_batch trio 3 3
check trio 3 shared
# hetpu su report shows the shared runs and totals them per device.
hetpu="$HETPU_BUILDDIR/tools/hetpu"
"$hetpu" su report --ledger "$STARPU_HOME/trio.sqlite" >"$STARPU_HOME/report" || fail "su report"
[ "$(grep -c 'GPU charged by use: opencl:0:0 .*shared with 2' "$STARPU_HOME/report")" -eq 3 ] ||
    { cat "$STARPU_HOME/report"; fail "su report does not show the three shared runs"; }
"$hetpu" su report --ledger "$STARPU_HOME/trio.sqlite" --by device >"$STARPU_HOME/bydev" || fail "su report --by device"
grep -Eq '^opencl:0:0 +3 +3 ' "$STARPU_HOME/bydev" || { cat "$STARPU_HOME/bydev"; fail "su report --by device"; }
# The same jobs one at a time.
run_batch alone 1
run_batch alone 1
check alone 2 alone

# SIGKILL one of three once all three were granted the device (the grant trace says so);
# the others finish.
export HETPU_MGB_TRACE="$STARPU_HOME/killed.trace"
HETPU_LEDGER="$STARPU_HOME/killed.sqlite" FAKE_NVML_LOG="$STARPU_HOME/killed.nvml" \
    "$prog" --tasks 4 --sleep-ms 1500 >"$STARPU_HOME/victim.out" 2>"$STARPU_HOME/victim.err" &
victim=$!
pids=$victim
i=0
until [ -s "$STARPU_HOME/killed.nvml" ]; do  # its run started (the hook opened NVML)
    i=$((i + 1)); [ $i -lt 3000 ] || fail "the victim never started"; sleep 0.1
done
HETPU_LEDGER="$STARPU_HOME/killed.sqlite" FAKE_NVML_LOG="$STARPU_HOME/killed.nvml" \
    timeout 300 "$prog" --tasks 3 --sleep-ms 1500 >"$STARPU_HOME/k1.out" 2>"$STARPU_HOME/k1.err" &
k1=$!
HETPU_LEDGER="$STARPU_HOME/killed.sqlite" FAKE_NVML_LOG="$STARPU_HOME/killed.nvml" \
    timeout 300 "$prog" --tasks 3 --sleep-ms 1500 >"$STARPU_HOME/k2.out" 2>"$STARPU_HOME/k2.err" &
k2=$!
pids="$victim $k1 $k2"
i=0
until [ "$(grep '"event":"grant"' "$STARPU_HOME/killed.trace" 2>/dev/null | sed 's/.*"pid":\([0-9]*\).*/\1/' |
    sort -u | wc -l)" -ge 3 ]; do
    i=$((i + 1)); [ $i -lt 3000 ] || fail "the survivors were never granted the device"; sleep 0.1
done
sleep 1  # let the three share it a while: the check below needs the victim's share to be visible
echo "$victim" >"$STARPU_HOME/killed.nvml.victim"
python3 -c 'import time; print(time.monotonic())' >"$STARPU_HOME/killed.nvml.killed_at"
kill -9 "$victim"
wait "$victim" 2>/dev/null
wait "$k1" || { cat "$STARPU_HOME/k1.err"; fail "survivor 1 failed"; }
wait "$k2" || { cat "$STARPU_HOME/k2.err"; fail "survivor 2 failed"; }
pids=
check killed 2 killed
echo "shared_gpu: ok"
