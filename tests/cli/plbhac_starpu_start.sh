#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# plb-hac's first run of a job starts from StarPU's calibrated model of the block codelet
# (plbhac_codelet_start.h) where a dmda run left one: no training blocks, every first block
# priced. Without such a model, or with HETPU_PLBHAC_STARPU_MODELS=off, it trains.
. "$(dirname "$0")/node_env.sh"
matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
[ -x "$matmul" ] || fail "$matmul not built"
dir=$STARPU_HOME
# hetpu's own models are neither read nor saved: every plb-hac run below is a first run, which
# without StarPU's model trains (the training phase, not the ladder, is what it spares).
export HETPU_PLBHAC_MODELS=off HETPU_BLOCK=32 HETPU_PLBHAC_LADDER=0

plbhac() { # NAME [VAR=VALUE...]: a verified plb-hac run, its trace in $dir/NAME.trace
    name=$1
    shift
    rm -f "$dir/$name.trace"
    env "$@" HETPU_TRACE="$dir/$name.trace" STARPU_SCHED=plb-hac "$matmul" -n 512 --verify >"$dir/$name.out" 2>&1 ||
        { cat "$dir/$name.out" >&2; fail "plb-hac run $name"; }
}
trained() { grep -q '"phase":"training"' "$dir/$1.trace"; }
said() { grep -q "starts from StarPU's calibrated model" "$dir/$1.out"; }

plbhac cold
trained cold || fail "no StarPU model, yet the first run did not train: $(head -3 "$dir/cold.trace")"
said cold && fail "no StarPU model, yet the run says it started from one"

# dmda calibrating (STARPU_CALIBRATE=1) gives every uncalibrated worker blocks until StarPU
# holds enough samples of the fixed block on each (10 by default): a few runs.
runs=0
while :; do
    runs=$((runs + 1))
    STARPU_CALIBRATE=1 STARPU_SCHED=dmda "$matmul" -n 512 --verify >"$dir/dmda.out" 2>&1 ||
        { cat "$dir/dmda.out" >&2; fail "dmda calibration run $runs"; }
    plbhac warm
    said warm && break
    [ "$runs" -lt 8 ] || fail "8 dmda calibration runs, and plb-hac still does not start from StarPU's model"
done
echo "plb-hac starts from StarPU's model after $runs dmda calibration run(s)"
trained warm && fail "started from StarPU's model, yet trained: $(grep -m3 training "$dir/warm.trace")"
python3 - "$dir/warm.trace" <<'PY' || fail "the first blocks were not priced by StarPU's model"
import json, sys
first = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    first.setdefault(r["worker"], r)
assert len(first) == 2, first
for r in first.values():
    assert r["phase"] != "training" and r["predicted_s"] > 0, r
PY

plbhac off HETPU_PLBHAC_STARPU_MODELS=off
trained off || fail "HETPU_PLBHAC_STARPU_MODELS=off, yet the run did not train"
said off && fail "HETPU_PLBHAC_STARPU_MODELS=off, yet the run says it started from StarPU's model"
exit 0
