#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The hepopta and htpopta policies on the heterogeneous test node: matmul's blocks follow
# the point of the front `hetpu pareto` computes from the same profiles for each
# HETPU_TRADEOFF; without profiles the policy says so and falls back to a load-balanced
# split; bad settings are clear errors; fft2d runs under hepopta too.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
fft2d="$HETPU_BUILDDIR/apps/fft2d/hetpu-fft2d"
grep -q '^#define HETPU_HAVE_OPENCL 1' "$HETPU_BUILDDIR/config.h" || { echo "no OpenCL codelets: skipped"; exit 77; }
dir=$STARPU_HOME
export HETPU_HOME="$dir/home"
mkdir -p "$HETPU_HOME/profiles"
# cpu0 fast and hungry, opencl0 slow and frugal; every multiple of 32 columns up to 256.
python3 - "$HETPU_HOME/profiles/matmul.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# base_power_w=30\nprocessor,size,time_s,energy_j,energy_source\n")
    for x in range(32, 257, 32):
        f.write("cpu0,%d,%g,%g,model\n" % (x, 0.001 * x, 0.010 * x))
        f.write("opencl0,%d,%g,%g,model\n" % (x, 0.003 * x + 0.02, 0.002 * x))
PY
cp "$HETPU_HOME/profiles/matmul.csv" "$HETPU_HOME/profiles/fft2d.csv"
"$tool" pareto --profiles "$HETPU_HOME/profiles/matmul.csv" --workload 256 --format json >"$dir/dyn.json" || fail "hetpu pareto"
"$tool" pareto --profiles "$HETPU_HOME/profiles/matmul.csv" --workload 256 --objective total --base-power 50 \
  --format json >"$dir/tot.json" || fail "hetpu pareto total"

check() {  # check JSONL PARETO_JSON INDEX: the run's per-worker columns are front[INDEX]
  python3 - "$1" "$2" "$3" <<'PY' || fail "$1: blocks do not follow the front (see above)"
import json, sys
run = json.loads(open(sys.argv[1]).read().splitlines()[-1])
front = json.load(open(sys.argv[2]))["front"]
want = front[int(sys.argv[3])]["distribution"]          # [cpu0, opencl0]
got = {w["type"]: w["elements"] for w in run["workers"]}
assert run["verified"] is True and run["planner"] in ("hepopta", "htpopta"), run
assert [got.get("CPU", 0), got.get("OpenCL", 0)] == want, (got, want)
assert all(w["blocks"] <= 1 for w in run["workers"]), run["workers"]
PY
}
for t in time energy; do
  idx=0; [ $t = time ] && idx=-1
  STARPU_SCHED=hepopta HETPU_TRADEOFF=$t "$matmul" -n 256 --verify --json "$dir/$t.jsonl" >/dev/null 2>"$dir/err" \
    || { cat "$dir/err"; fail "matmul under hepopta ($t)"; }
  grep -q "hepopta: matmul: point .*(tradeoff $t)" "$dir/err" || fail "no plan line: $(cat "$dir/err")"
  check "$dir/$t.jsonl" "$dir/dyn.json" $idx
  # The front is searched by the first run only; the trade-off is not part of the key.
  if [ $t = energy ]; then
    grep -q "front read from the cache" "$dir/err" || fail "second run searched again: $(cat "$dir/err")"
  else
    ! grep -q "front read from the cache" "$dir/err" || fail "first run claims a cached front"
  fi
done
# A corrupt cached front is ignored with a warning, searched again and rewritten.
ls "$HETPU_HOME"/fronts/*.front >/dev/null 2>&1 || fail "no front file under \$HETPU_HOME/fronts"
for f in "$HETPU_HOME"/fronts/*.front; do printf 'hetpu-front 1\ngarbage\n' >"$f"; done
STARPU_SCHED=hepopta HETPU_TRADEOFF=time "$matmul" -n 256 --verify --json "$dir/again.jsonl" >/dev/null 2>"$dir/err" \
  || { cat "$dir/err"; fail "matmul with a corrupt cached front"; }
grep -q "hepopta: ignoring cached front .*: made for another" "$dir/err" || fail "no corrupt-cache warning: $(cat "$dir/err")"
check "$dir/again.jsonl" "$dir/dyn.json" -1
STARPU_SCHED=hepopta HETPU_TRADEOFF=time "$matmul" -n 256 --verify >/dev/null 2>"$dir/err" || fail "matmul after rewrite"
grep -q "front read from the cache" "$dir/err" || fail "the corrupt front was not rewritten: $(cat "$dir/err")"
STARPU_SCHED=hepopta HETPU_TRADEOFF='slowdown<=5%' "$matmul" -n 256 --verify >/dev/null 2>"$dir/err" || fail "slowdown tradeoff"
HETPU_BASE_POWER=50 STARPU_SCHED=htpopta HETPU_TRADEOFF=energy "$matmul" -n 256 --verify --json "$dir/tot.jsonl" \
  >/dev/null 2>"$dir/err" || { cat "$dir/err"; fail "matmul under htpopta"; }
check "$dir/tot.jsonl" "$dir/tot.json" 0
STARPU_SCHED=hepopta HETPU_TRADEOFF=time "$fft2d" -n 256 --verify --json "$dir/fft.jsonl" >/dev/null 2>"$dir/err" \
  || { cat "$dir/err"; fail "fft2d under hepopta"; }
python3 -c "
import json,sys; r=json.loads(open('$dir/fft.jsonl').read()); assert r['verified'] is True and r['planner']=='hepopta', r
assert sum(w['elements'] for w in r['workers']) == 512 and all(w['blocks'] <= 2 for w in r['workers']), r" || fail "fft2d under hepopta"

# Bad settings.
if STARPU_SCHED=hepopta HETPU_TRADEOFF=fast "$matmul" -n 256 >/dev/null 2>"$dir/err"; then fail "bad tradeoff accepted"; fi
grep -q "HETPU_TRADEOFF: unknown trade-off 'fast'" "$dir/err" || fail "bad tradeoff message: $(cat "$dir/err")"
grep -v base_power "$HETPU_HOME/profiles/matmul.csv" >"$dir/nobp.csv" && cp "$dir/nobp.csv" "$HETPU_HOME/profiles/matmul.csv"
if STARPU_SCHED=htpopta "$matmul" -n 256 >/dev/null 2>"$dir/err"; then fail "htpopta without P_S accepted"; fi
grep -q "set HETPU_BASE_POWER" "$dir/err" || fail "missing P_S message: $(cat "$dir/err")"
printf 'processor,size,time_s,energy_j\ncpu0,256,oops,1\n' >"$HETPU_HOME/profiles/matmul.csv"
if STARPU_SCHED=hepopta "$matmul" -n 256 >/dev/null 2>"$dir/err"; then fail "malformed profile accepted"; fi
grep -q "matmul.csv:2: time_s 'oops'" "$dir/err" || fail "malformed profile message: $(cat "$dir/err")"
# A job the profiles cannot form, and no profiles at all: load-balanced fallback, said on stderr.
printf 'processor,size,time_s,energy_j\ncpu0,100,1,1\nopencl0,100,1,1\n' >"$HETPU_HOME/profiles/matmul.csv"
STARPU_SCHED=hepopta "$matmul" -n 256 --verify >/dev/null 2>"$dir/err" || fail "unreachable total: run failed"
grep -q "cannot be formed from the profiled sizes.*falling back to a load-balanced split" "$dir/err" || fail "unreachable message: $(cat "$dir/err")"
rm "$HETPU_HOME/profiles/matmul.csv"
STARPU_SCHED=hepopta "$matmul" -n 256 --verify --json "$dir/fallback.jsonl" >/dev/null 2>"$dir/err" || fail "fallback run failed"
grep -q "no profiles for job 'matmul' at $HETPU_HOME/profiles/matmul.csv.*falling back to a load-balanced split" "$dir/err" \
  || fail "no-profile message: $(cat "$dir/err")"
python3 -c "
import json; r=json.loads(open('$dir/fallback.jsonl').read()); assert r['verified'] is True and r['planner']=='fixed', r" \
  || fail "fallback run JSON"
echo "hepopta/htpopta: ok"
