#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu sim` end to end: JSON output for greedy, optimum and optimum-noisy on a small
# scenario, the optimum never worse than greedy, its noisy run one block per unit covering
# the job, and clear errors for bad scenarios and options.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
dir=$STARPU_HOME
cat >"$dir/scenario.json" <<'JSON'
{"workload": 20000, "granule": 16, "x_init": 512,
 "units": [{"name": "A.gpu0", "profile": [[512, 0.002], [8192, 0.02]], "transfer": [0.0005, 1e-7], "noise": 0.02},
           {"name": "A.cpu", "profile": [[512, 0.02], [8192, 0.35]]}]}
JSON
"$tool" sim --scenario "$dir/scenario.json" --policy greedy --seed 3 --json --trace "$dir/trace.jsonl" >"$dir/greedy.json" || fail "greedy run"
"$tool" sim --scenario "$dir/scenario.json" --policy optimum --json >"$dir/optimum.json" || fail "optimum run"
"$tool" sim --scenario "$dir/scenario.json" --policy optimum-noisy --seed 3 --json >"$dir/noisy.json" || fail "optimum-noisy run"
python3 - "$dir/greedy.json" "$dir/optimum.json" "$dir/trace.jsonl" "$dir/noisy.json" <<'PY' || fail "sim JSON output is wrong (see above)"
import json, sys
g = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2])); n = json.load(open(sys.argv[4]))
assert n["policy"] == "optimum-noisy" and n["blocks"] == 2, n
assert [u["elements"] for u in n["units"]] == [u["elements"] for u in o["units"]], (n, o)
for r in (g, o, n):
    for key in ("policy", "makespan_s", "blocks", "units", "classes"):
        assert key in r, key
    for u in r["units"]:
        for key in ("name", "busy_s", "idle_s", "idle_pct", "elements"):
            assert key in u, key
    assert sum(u["elements"] for u in r["units"]) == 20000, r
assert g["policy"] == "greedy" and o["policy"] == "optimum"
assert o["blocks"] == 2 and o["makespan_s"] <= g["makespan_s"], (o["makespan_s"], g["makespan_s"])
trace = [json.loads(l) for l in open(sys.argv[3])]
assert len(trace) == g["blocks"] and sum(b["size"] for b in trace) == 20000
PY
# The fastest kind alone: the GPU does everything (its 20000 elements take ~0.05 s, the CPU
# alone ~0.85 s), and its makespan is no better than the optimum's over both.
"$tool" sim --scenario "$dir/scenario.json" --policy best-single-kind --seed 3 --json >"$dir/single.json" ||
    fail "best-single-kind run"
python3 - "$dir/single.json" "$dir/optimum.json" <<'PY' || fail "best-single-kind output is wrong (see above)"
import json, sys
s = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
assert s["policy"] == "best-single-kind:gpu", s["policy"]
elements = {u["name"]: u["elements"] for u in s["units"]}
assert elements == {"A.gpu0": 20000, "A.cpu": 0}, elements
assert s["makespan_s"] >= o["makespan_s"], (s["makespan_s"], o["makespan_s"])
PY
echo '{"workload": 10, "units": [{"name": "u", "profile": [[2, 1], [1, 3]]}]}' >"$dir/bad.json"
if "$tool" sim --scenario "$dir/bad.json" --policy greedy 2>"$dir/err"; then fail "bad scenario accepted"; fi
grep -q "sizes must increase" "$dir/err" || fail "bad scenario message: $(cat "$dir/err")"
if "$tool" sim --scenario "$dir/missing.json" --policy greedy 2>"$dir/err"; then fail "missing file accepted"; fi
grep -q "cannot read" "$dir/err" || fail "missing file message"
if "$tool" sim --scenario "$dir/scenario.json" --policy nope 2>"$dir/err"; then fail "unknown policy accepted"; fi
grep -q -- "--policy: nope not in {greedy,plb-hac,hdss,hepopta,htpopta,optimum,optimum-noisy,best-single-kind}" "$dir/err" || fail "unknown policy message: $(cat "$dir/err")"
"$tool" sim --scenario="$dir/scenario.json" --policy=greedy --seed=3 --json >"$dir/eq.json" || fail "--name=value rejected"
"$tool" sim --help | grep -q -- "--no-planning-time" || fail "--help lists no options"
# A first run on a node StarPU calibrated: no training, every unit priced from the start.
"$tool" sim --scenario "$dir/scenario.json" --policy plb-hac --seed 3 --json --starpu-calibrated >"$dir/sc.json" ||
    fail "--starpu-calibrated run"
"$tool" sim --scenario "$dir/scenario.json" --policy plb-hac --seed 3 --json >"$dir/cold.json" || fail "plb-hac run"
python3 - "$dir/sc.json" "$dir/cold.json" <<'PY' || fail "--starpu-calibrated did not start trained"
import json, sys
sc, cold = (json.load(open(p)) for p in sys.argv[1:3])
assert sc["warm_started"] and sc["training_s"] == 0, sc
assert not cold["warm_started"] and cold["training_s"] > 0, cold
PY
if "$tool" sim --scenario "$dir/scenario.json" --policy hdss --starpu-calibrated 2>"$dir/err"; then
    fail "--starpu-calibrated accepted for hdss"
fi
grep -q -- "--starpu-calibrated is for --policy plb-hac" "$dir/err" || fail "--starpu-calibrated message: $(cat "$dir/err")"
# hepopta and htpopta plan from what a calibration would measure on the units: one block per
# unit they use, the whole job covered; least energy (the GPU's 0.002 s per 512 elements at
# 1 W against the CPU's 0.02 s) puts it all on the GPU, the fastest point uses both units.
for p in hepopta htpopta; do
    HETPU_TRADEOFF=time "$tool" sim --scenario "$dir/scenario.json" --policy $p --seed 3 --json >"$dir/$p-time.json" \
        2>"$dir/err" || fail "$p run: $(cat "$dir/err")"
    grep -q "source the scenario's unit curves" "$dir/err" || fail "$p did not say its plan: $(cat "$dir/err")"
done
HETPU_TRADEOFF=energy "$tool" sim --scenario "$dir/scenario.json" --policy hepopta --seed 3 --json \
    >"$dir/hepopta-energy.json" 2>/dev/null || fail "hepopta energy run"
python3 - "$dir/hepopta-time.json" "$dir/htpopta-time.json" "$dir/hepopta-energy.json" <<'PY' || fail "hepopta/htpopta output is wrong (see above)"
import json, sys
t, tt, e = (json.load(open(p)) for p in sys.argv[1:4])
for r, policy in ((t, "hepopta"), (tt, "htpopta"), (e, "hepopta")):
    assert r["policy"] == policy, r
    assert sum(u["elements"] for u in r["units"]) == 20000, r
    assert r["blocks"] == sum(1 for u in r["units"] if u["elements"] > 0), r
assert all(u["elements"] > 0 for u in t["units"]), t
assert {u["name"]: u["elements"] for u in e["units"]} == {"A.gpu0": 20000, "A.cpu": 0}, e
assert t["makespan_s"] < e["makespan_s"], (t, e)
PY
if "$tool" sim --scenario "$dir/scenario.json" --policy hdss --plan-trace "$dir/pt" 2>"$dir/err"; then
    fail "--plan-trace accepted for hdss"
fi
grep -q -- "--plan-trace is for --policy plb-hac" "$dir/err" || fail "--plan-trace message: $(cat "$dir/err")"
echo "hetpu sim: ok"
