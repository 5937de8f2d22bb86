#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu mgb-sim` from the command line: the lower bound in every run and as
# `--policy bound`, the co-location models, and bad input refused with the field or option
# named (it used to wrap --seed -1 and overflow on huge numbers).
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
dir=$STARPU_HOME
job='{"memory_gib": 4, "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 10}]}'
cat >"$dir/s.json" <<JSON
{"gpus": [{"preset": "V100"}], "workers": 2, "interference": 0, "jobs": [$job, $job]}
JSON
"$tool" mgb-sim --scenario "$dir/s.json" --policy bound >"$dir/out" || fail "--policy bound"
grep -q "lower bound on the makespan: 10.0 s" "$dir/out" || { cat "$dir/out"; fail "bound text"; }
"$tool" mgb-sim --scenario "$dir/s.json" --policy mgb,sa --json >"$dir/out" || fail "--json"
python3 - "$dir/out" <<'PY' || fail "JSON (see above)"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
mgb, sa = runs
assert mgb["lower_bound_s"] == 10.0 and mgb["makespan_s"] == 10.0 and mgb["makespan_over_bound"] == 1.0, mgb
assert sa["makespan_s"] == 20.0 and sa["makespan_over_bound"] == 2.0, sa
assert mgb["colocation"] == "mps", mgb
PY
"$tool" mgb-sim --scenario "$dir/s.json" --colocation time-sliced >"$dir/out" || fail "--colocation time-sliced"
grep -q "makespan 20.0 s" "$dir/out" || { cat "$dir/out"; fail "time-sliced makespan"; }

# Bad input: exit status and a message naming what is wrong.
refused() {  # expected status, expected message, command...
    want=$1 msg=$2
    shift 2
    "$@" >"$dir/out" 2>"$dir/err"
    rc=$?
    [ "$rc" -eq "$want" ] || { cat "$dir/err"; fail "exit status $rc, expected $want: $*"; }
    grep -q -- "$msg" "$dir/err" || { cat "$dir/err"; fail "no '$msg' for: $*"; }
}
refused 2 "--seed must be 0 or more (got -1)" "$tool" mgb-sim --scenario "$dir/s.json" --seed -1
refused 2 "unknown model 'shared'" "$tool" mgb-sim --scenario "$dir/s.json" --colocation shared
cat >"$dir/huge.json" <<'JSON'
{"gpus": [{"preset": "V100"}], "workers": 2,
 "jobs": [{"memory_gib": 1e10, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1}]}]}
JSON
refused 1 "jobs\[0\].memory_gib: must be at most 1048576" "$tool" mgb-sim --scenario "$dir/huge.json"
echo "mgb_sim_cli: ok"
