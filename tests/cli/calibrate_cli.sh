#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu calibrate` on the heterogeneous test node: matmul and fft2d profiles for every
# worker, written under $HETPU_HOME/profiles/, naming the energy source of each point (the
# model here: no sensor), readable by `hetpu pareto`; bad options are clear errors.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
export HETPU_HOME="$STARPU_HOME/home"
"$tool" calibrate --app matmul --sizes 16:32:16 --dim 64 --min-reps 2 --max-reps 4 >"$STARPU_HOME/out" 2>&1 \
  || { cat "$STARPU_HOME/out"; fail "calibrate matmul"; }
grep -q "no sensor, using the model source" "$STARPU_HOME/out" || fail "calibrate does not say the energy is modelled: $(cat "$STARPU_HOME/out")"
"$tool" calibrate --app fft2d --sizes 8,16 --dim 32 --min-reps 2 --max-reps 4 --output "$STARPU_HOME/fft.csv" \
  >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out"; fail "calibrate fft2d"; }
python3 - "$HETPU_HOME/profiles/matmul.csv" "$STARPU_HOME/fft.csv" <<'PY' || fail "calibrated CSV is wrong (see above)"
import csv, sys
for path, sizes in ((sys.argv[1], {16, 32}), (sys.argv[2], {8, 16})):
    lines = open(path).read().splitlines()
    assert any(l.startswith("# base_power_w=") for l in lines), lines[:5]
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    procs = {r["processor"] for r in rows}
    assert "cpu0" in procs and len(procs) >= 1, procs
    for p in procs:
        assert {int(r["size"]) for r in rows if r["processor"] == p} == sizes, (p, rows)
    for r in rows:
        assert float(r["time_s"]) > 0 and float(r["energy_j"]) > 0, r
        assert r["energy_source"] == "model" and 2 <= int(r["reps"]) <= 4, r
PY
nprocs=$(grep -c ',16,' "$HETPU_HOME/profiles/matmul.csv")
"$tool" pareto --profiles "$HETPU_HOME/profiles/matmul.csv" --workload $((32 * nprocs)) --format json >/dev/null \
  || fail "hetpu pareto cannot read the calibrated profiles"
if "$tool" calibrate --app kmeans --sizes 8 2>"$STARPU_HOME/err"; then fail "unknown app accepted"; fi
grep -q "not an app calibrate knows" "$STARPU_HOME/err" || fail "unknown app message: $(cat "$STARPU_HOME/err")"
if "$tool" calibrate --app matmul --sizes 0 2>"$STARPU_HOME/err"; then fail "size 0 accepted"; fi
grep -q -- "--sizes: size '0' is not a positive integer" "$STARPU_HOME/err" || fail "bad size message"
echo "hetpu calibrate: ok"
