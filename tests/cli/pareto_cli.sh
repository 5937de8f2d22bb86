#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu pareto` end to end: table and JSON output on a small CSV, total energy with a base
# power, the PNG plot, and one clear error (with the line number) per kind of bad input.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
dir=$STARPU_HOME
cat >"$dir/p.csv" <<'CSV'
processor,size,time_s,energy_j,energy_source
gpu0,256,0.10,9.0,model
gpu0,512,0.18,17.0,model
gpu0,768,0.26,26.0,model
gpu0,1024,0.35,34.0,model
cpu0,256,0.40,4.0,model
cpu0,512,0.85,7.5,model
cpu0,768,1.30,11.0,model
cpu0,1024,1.80,14.0,model
CSV
"$tool" pareto --profiles "$dir/p.csv" --workload 1024 >"$dir/table.txt" || fail "table run"
grep -q "Pareto front of time vs dynamic energy for 1024 elements" "$dir/table.txt" || fail "table header: $(cat "$dir/table.txt")"
grep -q "^  LB " "$dir/table.txt" || fail "no load-balanced row"
"$tool" pareto --profiles "$dir/p.csv" --workload 1024 --format json >"$dir/dyn.json" || fail "json run"
"$tool" pareto --profiles "$dir/p.csv" --workload 1024 --objective total --base-power 20 --format json \
  --plot "$dir/front.png" >"$dir/tot.json" || fail "total run with plot"
python3 - "$dir/dyn.json" "$dir/tot.json" <<'PY' || fail "pareto JSON output is wrong (see above)"
import json, sys
d = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
assert d["objective"] == "dynamic" and t["objective"] == "total", (d["objective"], t["objective"])
assert d["processors"] == ["gpu0", "cpu0"], d["processors"]
for r in (d, t):
    f = r["front"]
    assert [p["energy_j"] for p in f] == sorted(p["energy_j"] for p in f), f
    assert all(sum(p["distribution"]) == 1024 for p in f)
    assert r["load_balanced"]["distribution"] and "metrics" in r
# Energy-optimal end: all on the frugal CPU; time-optimal: the GPU does most.
assert d["front"][0]["distribution"] == [0, 1024], d["front"][0]
assert d["front"][-1]["distribution"][0] > d["front"][-1]["distribution"][1], d["front"][-1]
# Total energy = dynamic + 20 W x time, and its front is a subset of the dynamic one.
dyn = {(p["time_s"], tuple(p["distribution"])): p["energy_j"] for p in d["front"]}
for p in t["front"]:
    key = (p["time_s"], tuple(p["distribution"]))
    assert key in dyn, p
    assert abs(p["energy_j"] - (dyn[key] + 20 * p["time_s"])) < 1e-9, p
PY
[ -s "$dir/front.png" ] && head -c 4 "$dir/front.png" | grep -q PNG || fail "no PNG plot"
[ ! -e "$dir/front.png.tmp" ] || fail "temporary plot left behind"

# Bad input: message with the line number, non-zero exit.
expect_error() {  # expect_error "message" file workload
  if "$tool" pareto --profiles "$2" --workload "$3" >/dev/null 2>"$dir/err"; then fail "accepted: $1"; fi
  grep -qF "$1" "$dir/err" || fail "expected '$1', got: $(cat "$dir/err")"
}
printf 'processor,size,time_s,energy_j\ncpu0,256,0.4,4\ncpu0,512,-1,4\n' >"$dir/neg.csv"
expect_error "neg.csv:3: time_s '-1' is not a positive number" "$dir/neg.csv" 256
printf 'processor,size,time_s,energy_j\ncpu0,256,0.4\n' >"$dir/short.csv"
expect_error "short.csv:2: expected 4 fields like the header, got 3" "$dir/short.csv" 256
printf 'proc,size,time\ncpu0,256,0.4\n' >"$dir/head.csv"
expect_error "head.csv:1: the header must name the columns" "$dir/head.csv" 256
printf 'processor,size,time_s,energy_j\n"cpu0,256,0.4,1\n' >"$dir/quote.csv"
expect_error "quote.csv:2: unterminated quoted field" "$dir/quote.csv" 256
expect_error "workload 1000 cannot be formed" "$dir/p.csv" 1000
if "$tool" pareto --profiles "$dir/p.csv" --workload 1024 --processors cpu0 >/dev/null 2>"$dir/err"; then fail "unknown processor accepted"; fi
grep -qF "p.csv:2: unknown processor 'gpu0'" "$dir/err" || fail "unknown processor message: $(cat "$dir/err")"
"$tool" pareto --profiles "$dir/p.csv" 2>"$dir/err"
[ $? -eq 2 ] || fail "missing --workload: exit status 2 expected"
grep -q -- "--workload is required" "$dir/err" || fail "usage message: $(cat "$dir/err")"
# Both spellings of an option, and CLI11's --help.
"$tool" pareto --profiles="$dir/p.csv" --workload=1024 --format=json >"$dir/eq.json" || fail "--name=value rejected"
"$tool" pareto --profiles "$dir/p.csv" --workload 1024 --format json | cmp -s - "$dir/eq.json" || fail "--name=value differs from --name value"
"$tool" pareto --help >"$dir/help" || fail "--help exit status"
grep -q -- "--base-power" "$dir/help" || fail "--help lists no options: $(cat "$dir/help")"
echo "hetpu pareto: ok"
