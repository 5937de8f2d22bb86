#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu mgb-sim` from the command line: the lower bound in every run and as
# `--policy bound`, the co-location models, and bad input refused with the field or option
# named, rejected jobs an error unless allowed, and a scenario file that never ends refused.
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
refused 2 "--seed must be a whole number from 0 to 18446744073709551615 (got '-1')" \
    "$tool" mgb-sim --scenario "$dir/s.json" --seed -1
refused 2 "--seed must be a whole number from 0 to 18446744073709551615 (got '99999999999999999999')" \
    "$tool" mgb-sim --scenario "$dir/s.json" --seed 99999999999999999999
refused 2 "unknown model 'shared'" "$tool" mgb-sim --scenario "$dir/s.json" --colocation shared
cat >"$dir/huge.json" <<'JSON'
{"gpus": [{"preset": "V100"}], "workers": 2,
 "jobs": [{"memory_gib": 1e10, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1}]}]}
JSON
refused 1 "jobs\[0\].memory_gib: must be at most 1048576" "$tool" mgb-sim --scenario "$dir/huge.json"
# A number past a double's range is named by its field, not in the JSON library's words.
cat >"$dir/overflow.json" <<'JSON'
{"gpus": [{"preset": "V100"}], "workers": 2,
 "jobs": [{"memory_gib": 4, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1e400}]}]}
JSON
refused 1 "jobs\[0\].kernels\[0\].seconds: .*1e400" "$tool" mgb-sim --scenario "$dir/overflow.json"
# A file that never ends is refused at the size cap, not read until memory runs out.
refused 1 "'/dev/zero' is larger than 64 MiB" "$tool" mgb-sim --scenario /dev/zero
# A job no device fits: an error naming it and the largest device, unless --allow-rejected.
big='{"name": "big", "memory_gib": 40, "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 10}]}'
cat >"$dir/reject.json" <<JSON
{"gpus": [{"preset": "V100"}], "workers": 2, "jobs": [$job, $big]}
JSON
refused 1 "job 1 'big': 40.00 GiB; the largest device, V100, has 16.00 GiB" "$tool" mgb-sim --scenario "$dir/reject.json"
"$tool" mgb-sim --scenario "$dir/reject.json" --allow-rejected --json >"$dir/out" || fail "--allow-rejected"
grep -q '"jobs_rejected":1' "$dir/out" || { cat "$dir/out"; fail "--allow-rejected counts the rejected job"; }
echo "mgb_sim_cli: ok"
