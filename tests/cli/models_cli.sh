#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu models` and `hetpu sim --models` end to end: a first simulated run trains and saves
# its models, a second starts from them (no training), `list`/`show` describe them, a
# corrupt file is ignored with a warning (the run trains and rewrites it), `clear` removes.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
dir=$STARPU_HOME
home=$dir/home
cat >"$dir/pair.json" <<'JSON'
{"workload": 400000, "granule": 64, "x_init": 2048,
 "units": [{"name": "A.cpu", "profile": [[1024, 0.01], [1048576, 10.24]], "noise": 0.02},
           {"name": "A.gpu0", "profile": [[1024, 0.006], [1048576, 1.05]], "transfer": [0.001, 1e-8], "noise": 0.02}]}
JSON
run() { "$tool" sim --scenario "$dir/pair.json" --policy plb-hac --seed "$1" --json --models "$home" 2>"$dir/err"; }
run 1 >"$dir/r1.json" || fail "first run"
run 2 >"$dir/r2.json" || fail "second run"
python3 - "$dir/r1.json" "$dir/r2.json" <<'PY' || fail "second run did not start from the first run's models"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert not a["warm_started"] and a["training_s"] > 0, a
assert b["warm_started"] and b["training_s"] == 0, b
PY
"$tool" models list --home "$home" >"$dir/list" || fail "models list"
grep -q "^pair  *400000 .* 2 .*A.cpu,A.gpu0" "$dir/list" || fail "models list: $(cat "$dir/list")"
"$tool" models show pair --home "$home" >"$dir/show" || fail "models show"
grep -q "worker 1 A.gpu0" "$dir/show" || fail "models show: $(cat "$dir/show")"
grep -q "latency .* s per block (median of [0-9]*)" "$dir/show" || fail "models show has no latency: $(cat "$dir/show")"
grep -q "home .* s from a block's end to its results in main memory (median of [0-9]*)" "$dir/show" ||
    fail "models show has no delay home: $(cat "$dir/show")"
grep -q "misses .* spread of log(measured / predicted) ([0-9]* blocks, out of sample)" "$dir/show" ||
    fail "models show has no misses: $(cat "$dir/show")"
"$tool" models show pair --json --home "$home" >"$dir/show.json" || fail "models show --json"
python3 - "$dir/show.json" <<'PY' || fail "models show --json: $(cat "$dir/show.json")"
import json, sys
files = json.load(open(sys.argv[1]))
pus = files[0]["pus"]
assert len(pus) == 2, pus
# The simulator reports every block's whole cost: no latency beyond it.
assert all(p["latency_s"] >= 0 and p["latency_s"] < 1e-6 for p in pus), pus
# Nor a way home for its results: a simulated block's results are home when it ends.
assert all(p["home_delay_s"] == 0 for p in pus), pus
assert all(p["seconds_at_size_hi"] > 0 for p in pus), pus
# Every PU ran blocks after its models were fitted: their misses are saved, none of them
# larger than the simulated units' noise allows (a few percent).
assert all(p["misses"] > 0 and 0 <= p["miss_spread"] < 0.2 for p in pus), pus
PY
# A measurement held back as a surprise (a spike or a change, the next block decides) is
# kept in the file and shown: the GPU's largest block, at twice its fitted time.
cp -r "$home" "$dir/held-home"
python3 - "$dir"/held-home/plbhac-models/pair.*.json <<'PY' || fail "cannot add a held measurement"
import json, sys
j = json.load(open(sys.argv[1]))
gpu = j["pus"][1]
x, s = max(gpu["exec"])
gpu["exec_held"] = [[x, 2.5 * s]]
json.dump(j, open(sys.argv[1], "w"))
PY
"$tool" models show pair --home "$dir/held-home" >"$dir/held-show" || fail "models show with a held measurement"
grep -q "held .* elements in .* s, 2\.[0-9]*x the prediction" "$dir/held-show" ||
    fail "models show has no held measurement: $(cat "$dir/held-show")"
"$tool" models show pair --json --home "$dir/held-home" |
    python3 -c 'import json,sys; p=json.load(sys.stdin)[0]["pus"]; assert len(p[1]["exec_held"]) == 1 and p[0]["exec_held"] == [], p' ||
    fail "models show --json has no held measurement"
if "$tool" models show nosuchjob --home "$home" 2>"$dir/err"; then fail "show of an unknown job succeeded"; fi
# The same job at another size (a scenario of the same file name, twice the workload)
# starts cold: an element's cost may depend on the size. Its models go to a file of their own.
mkdir -p "$dir/big"
sed 's/"workload": 400000/"workload": 800000/' "$dir/pair.json" >"$dir/big/pair.json"
"$tool" sim --scenario "$dir/big/pair.json" --policy plb-hac --seed 1 --json --models "$home" >"$dir/big.json" 2>"$dir/err" ||
    fail "run of another size"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert not r["warm_started"], r' "$dir/big.json" ||
    fail "another size started from the models of the first"
[ "$(ls "$home"/plbhac-models/pair.*.json | wc -l)" -eq 2 ] || fail "sizes share a file: $(ls "$home/plbhac-models")"
"$tool" models list --home "$home" >"$dir/list2" || fail "models list"
grep -q "^pair  *800000 .* 1 " "$dir/list2" || fail "models list, second size: $(cat "$dir/list2")"
rm "$(grep -l '"elements": 800000' "$home"/plbhac-models/pair.*.json)" || fail "no file of the second size"
f=$(ls "$home"/plbhac-models/pair.*.json)
echo '{"format": "hetpu-plbhac-models", "version": 1, "job": ' >"$f"
if "$tool" models show pair --home "$home" 2>"$dir/err"; then fail "show of a job whose only file is corrupt succeeded"; fi
grep -q "unreadable, ignored by runs: pair\..*\.json: " "$dir/err" || fail "show does not name the corrupt file: $(cat "$dir/err")"
run 3 >"$dir/r3.json" || fail "run over a corrupt file"
grep -q "ignored" "$dir/err" || fail "no warning for a corrupt file: $(cat "$dir/err")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert not r["warm_started"], r' "$dir/r3.json" || fail "corrupt file used"
run 4 >"$dir/r4.json" || fail "run after the rewrite"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["warm_started"], r' "$dir/r4.json" || fail "file not rewritten"
if "$tool" models clear --home "$home" 2>"$dir/err"; then fail "clear without JOB or --all accepted"; fi
"$tool" models clear pair --home "$home" >/dev/null || fail "models clear"
[ -z "$(ls "$home/plbhac-models")" ] || fail "clear left files: $(ls "$home/plbhac-models")"
echo "hetpu models: ok"
