#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Accounting end to end: `hetpu su` on the paper's Table I system, and the hook charging
# real runs on the test node (1 CPU + 1 OpenCL worker on PoCL) into a private ledger —
# matmul (hetpu_init) and an unmodified StarPU program (preload library), under dmda and
# hetpu policies; HETPU_ACCOUNTING=0; a corrupt ledger; two concurrent runs; kill -9.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cli/node_env.sh"
examples="$here/../../accounting_hook/examples"
tool="$HETPU_BUILDDIR/tools/hetpu"
matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
prog="$HETPU_BUILDDIR/tests/programs/plain_starpu"
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
for f in "$tool" "$matmul" "$prog" "$preload"; do [ -e "$f" ] || fail "missing $f"; done
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
command -v sqlite3 >/dev/null 2>&1 || fail "the sqlite3 CLI is needed (apt-get install sqlite3)"
export HETPU_LEDGER="$STARPU_HOME/ledger.sqlite"
unset HETPU_PARTITION_CONFIG HETPU_PARTITION HETPU_ACCOUNTING HETPU_ACCOUNTING_QUIET SLURM_JOB_ID
out=$STARPU_HOME/out; err=$STARPU_HOME/err
rows() { sqlite3 "$HETPU_LEDGER" "SELECT COUNT(*) FROM jobs" 2>/dev/null || echo 0; }

# --- hetpu su on Table I: the paper's GPU node charges and cost ratios -------------------
"$tool" su compare --config "$examples/table1_system.toml" --benchmarks "$examples/nvidia_benchmarks.csv" \
    --json --plot "$STARPU_HOME/fig1.png" >"$out" 2>"$err" || { cat "$err"; fail "su compare"; }
[ -s "$STARPU_HOME/fig1.png" ] || fail "no compare plot"
python3 - "$out" <<'PY' || fail "su compare figures (see above)"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
charges = [r for r in rows if r["table"] == "charges"]
gpu = {r["model"]: r["gpu_charge"] for r in charges}
assert gpu == {"sm": 432, "peak": 466, "energy": 192}, gpu
# Paper, Table IV (energy-based): CPU charge and cost ratio per application.
table4 = {"FUN3D": (1476, 7.69), "RTM": (1152, 6.00), "SPECFEM3D": (3780, 19.69), "GROMACS": (828, 4.31),
          "LAMMPS": (2124, 11.06), "NAMD": (1296, 6.75), "Relion": (432, 2.25), "GTC": (1908, 9.94),
          "MILC": (3888, 20.25), "Chroma": (3564, 18.56), "Quantum Expresso": (468, 2.44), "ICON": (540, 2.81)}
for r in charges:
    if r["model"] == "energy" and r["application"] in table4:
        cpu, ratio = table4[r["application"]]
        assert r["cpu_charge"] == cpu and round(r["cost_ratio"], 2) == ratio, r
assert len(charges) == 39, len(charges)
dec = {r["speedup"]: r for r in rows if r["table"] == "decision"}
assert dec[8]["energy"]["node"] == "gpu" and dec[8]["sm"]["node"] == "cpu" and dec[8]["peak"]["node"] == "cpu"
assert dec[13]["sm"]["node"] == "gpu" and dec[5]["energy"]["node"] == "cpu"
PY
"$tool" su charge --config "$examples/table1_system.toml" --partition gpu --nodes 2 --cores 9 --mem-gib 96 \
    --gpus 1 --hours 1.5 --json >"$out" || fail "su charge"
python3 -c "
import json,sys; r=json.load(open('$out'))
assert abs(r['su'] - 192*1.5*2*0.25) < 1e-9 and r['rate'] == 192, r
assert r['fractions']['memory'] == 9/36, r" || fail "su charge --json: $(cat "$out")"
"$tool" su rate --config "$examples/table1_system.toml" >"$out" || fail "su rate"
grep -q "^gpu .* 192 .*GRES/gpu=48" "$out" || { cat "$out"; fail "su rate"; }
# Bad input: the file, line and key are named; usage errors exit 2.
printf '[partition.gpu]\ncores_per_node = 64\nmem_gib_per_node = 256\ngpu_tdp = 560\n' >"$STARPU_HOME/bad.toml"
if "$tool" su rate --config "$STARPU_HOME/bad.toml" 2>"$err"; then fail "bad config accepted"; fi
grep -q "bad.toml:4: unknown key 'gpu_tdp'" "$err" || { cat "$err"; fail "bad config message"; }
"$tool" su charge --config "$examples/table1_system.toml" --partition gpu --nodes 1 --cores 99 --mem-gib 1 --gpus 0 --hours 1 2>"$err"
[ $? -eq 2 ] && grep -q "99" "$err" || { cat "$err"; fail "impossible job accepted"; }

# --- the hook on real runs -------------------------------------------------------------
STARPU_SCHED=dmda "$matmul" -n 128 --block 32 --verify >"$out" 2>"$err" || { cat "$err"; fail "matmul run"; }
grep -q "hetpu accounting: hetpu-matmul (policy dmda)" "$err" || { cat "$err"; fail "no summary for matmul"; }
grep -q "recorded as job 1 in $HETPU_LEDGER" "$err" || { cat "$err"; fail "matmul not recorded"; }
LD_PRELOAD=$preload STARPU_SCHED=greedy "$prog" >"$out" 2>"$err" || { cat "$err"; fail "preloaded run"; }
grep -q "50 tasks done" "$out" || fail "preloaded program did not finish"
[ "$(rows)" = 2 ] || fail "expected 2 ledger rows, got $(rows)"
"$tool" su report --json >"$out" || fail "su report"
python3 - "$out" <<'PY' || fail "ledger rows (see above)"
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
assert [j["app"] for j in jobs] == ["hetpu-matmul", "plain_starpu"], jobs
assert [j["policy"] for j in jobs] == ["dmda", "greedy"], jobs
for j in jobs:
    assert j["su"] > 0 and j["wall_s"] > 0, j
    assert j["energy_source"] in ("model", "rapl", "rapl+model"), j   # never an unnamed figure
    assert j["energy_j"] > 0, j
    tasks = sum(w["tasks"] for w in j["workers"])
    assert all(w["energy_source"] for w in j["workers"]), j
    assert {w["type"] for w in j["workers"]} == {"cpu", "opencl"}, j
    assert tasks == (4 if j["app"] == "hetpu-matmul" else 50), (j["app"], tasks)
PY
"$tool" su report >"$out" && grep -q "hetpu-matmul" "$out" && grep -q "plain_starpu" "$out" && grep -q "^2 jobs" "$out" \
    || { cat "$out"; fail "su report table"; }
"$tool" su report --by app >"$out" && grep -q "^hetpu-matmul  *1 " "$out" || { cat "$out"; fail "su report --by app"; }

# A hetpu policy and a quiet run; HETPU_ACCOUNTING=0 adds nothing.
LD_PRELOAD=$preload STARPU_SCHED=plb-hac HETPU_ACCOUNTING_QUIET=1 "$prog" >"$out" 2>"$err" || fail "plb-hac run"
grep -q "hetpu accounting" "$err" && fail "HETPU_ACCOUNTING_QUIET=1 printed a summary"
HETPU_ACCOUNTING=0 STARPU_SCHED=eager "$matmul" -n 64 --block 32 >"$out" 2>"$err" || fail "unaccounted run"
grep -q "hetpu accounting" "$err" && fail "HETPU_ACCOUNTING=0 still accounted"
[ "$(rows)" = 3 ] || fail "expected 3 rows after the plb-hac and unaccounted runs, got $(rows)"

# Two concurrent runs both land.
LD_PRELOAD=$preload STARPU_SCHED=dmda "$prog" >"$out.1" 2>&1 & p1=$!
LD_PRELOAD=$preload STARPU_SCHED=dmda "$prog" >"$out.2" 2>&1 & p2=$!
wait $p1 && wait $p2 || { cat "$out.1" "$out.2"; fail "concurrent runs"; }
[ "$(rows)" = 5 ] || fail "concurrent runs: expected 5 rows, got $(rows)"

# kill -9 in the middle of a run: no partial row, the ledger stays sound and usable.
# The kill waits for an event, not a time: the first repetition's summary (flushed per
# repetition), so StarPU and the accounting hook are up; 100000 repetitions then leave
# the run far from its end, however fast the machine.
: >"$out"
STARPU_SCHED=dmda "$matmul" -n 768 --block 64 --reps 100000 >"$out" 2>"$err" & victim=$!
tries=0
while [ ! -s "$out" ]; do
    kill -0 $victim 2>/dev/null || { cat "$err"; fail "matmul ended before its first repetition"; }
    tries=$((tries + 1))
    [ $tries -lt 3000 ] || { kill -9 $victim; fail "no repetition finished in 300 s"; }
    sleep 0.1
done
kill -9 $victim 2>/dev/null || fail "matmul finished 100000 repetitions before kill -9"
wait $victim 2>/dev/null
[ "$(sqlite3 "$HETPU_LEDGER" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after kill -9"
[ "$(rows)" = 5 ] || fail "kill -9: expected 5 rows, got $(rows)"
[ "$(sqlite3 "$HETPU_LEDGER" 'SELECT COUNT(*) FROM jobs j WHERE worker_rows != (SELECT COUNT(*) FROM job_workers w WHERE w.job_id = j.id)')" = 0 ] \
    || fail "a job row lacks its worker rows"

# A corrupt ledger: the run still completes, and says the charge was not recorded.
head -c 4096 /dev/urandom >"$STARPU_HOME/corrupt.sqlite"
HETPU_LEDGER=$STARPU_HOME/corrupt.sqlite LD_PRELOAD=$preload "$prog" >"$out" 2>"$err" || { cat "$err"; fail "run with a corrupt ledger failed"; }
grep -q "50 tasks done" "$out" || fail "run with a corrupt ledger did not finish"
grep -q "NOT recorded: ledger $STARPU_HOME/corrupt.sqlite: .*corrupt" "$err" || { cat "$err"; fail "corrupt ledger message"; }
HETPU_LEDGER=$STARPU_HOME/corrupt.sqlite HETPU_ACCOUNTING_QUIET=1 LD_PRELOAD=$preload "$prog" >"$out" 2>"$err" || fail "quiet corrupt"
grep -q "NOT recorded" "$err" || fail "quiet mode hid a ledger failure"
# Under Slurm the allocation is charged, on the partition Slurm names, with carbon.
SLURM_JOB_ID=4242 SLURM_JOB_PARTITION=gpu SLURM_JOB_NUM_NODES=2 SLURM_CPUS_ON_NODE=9 SLURM_MEM_PER_NODE=8192 \
  SLURM_JOB_GPUS=0 HETPU_PARTITION_CONFIG=$examples/table1_system.toml HETPU_GRID_GCO2E_PER_KWH=400 \
  LD_PRELOAD=$preload "$prog" >"$out" 2>"$err" || { cat "$err"; fail "run under Slurm"; }
[ "$(sqlite3 "$HETPU_LEDGER" "SELECT partition, fraction_source, slurm_job_id, nodes, fc, fg, weight, gco2e > 0,
      abs(su - weight * wall_s / 3600 * nodes * 0.25) < 1e-12 FROM jobs ORDER BY id DESC LIMIT 1")" = "gpu|slurm|4242|2|0.25|0.25|192.0|1|1" ] \
    || { sqlite3 "$HETPU_LEDGER" "SELECT * FROM jobs ORDER BY id DESC LIMIT 1"; fail "Slurm allocation not charged"; }

# A RAPL sensor (a fake powercap tree whose package counter rises during the run): the CPU
# figures are measured, named "rapl", with the model's estimate beside them. The counter
# ticks until the run is over, however late a loaded machine starts the run.
pc=$STARPU_HOME/powercap; mkdir -p "$pc/intel-rapl:0"
echo package-0 >"$pc/intel-rapl:0/name"; echo 262143328850 >"$pc/intel-rapl:0/max_energy_range_uj"
echo 1000000 >"$pc/intel-rapl:0/energy_uj"
( uj=1000000; while :; do uj=$((uj + 500000)); echo $uj >"$pc/intel-rapl:0/energy_uj.new"
  mv "$pc/intel-rapl:0/energy_uj.new" "$pc/intel-rapl:0/energy_uj"; sleep 0.02; done ) & ticker=$!
HETPU_POWERCAP_ROOT=$pc STARPU_SCHED=dmda "$matmul" -n 384 --block 64 >"$out" 2>"$err" || { cat "$err"; fail "run with RAPL"; }
kill $ticker 2>/dev/null; wait $ticker 2>/dev/null
grep -q "energy .* \[rapl\] (model: " "$err" || { cat "$err"; fail "RAPL figures not named in the summary"; }
[ "$(sqlite3 "$HETPU_LEDGER" "SELECT energy_source, energy_j > 0 FROM jobs ORDER BY id DESC LIMIT 1")" = "rapl|1" ] \
    || { sqlite3 "$HETPU_LEDGER" "SELECT * FROM jobs ORDER BY id DESC LIMIT 1"; fail "RAPL energy not in the ledger"; }
echo "accounting cli: ok"
