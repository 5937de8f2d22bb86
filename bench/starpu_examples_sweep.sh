#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every StarPU example program installed here (Debian's starpu-examples: about a hundred,
# written by StarPU's authors, unmodified) under every hetpu policy through the preload
# library, on several node shapes. The long form of tests/cli/starpu_examples.sh: it finds
# what make check's fourteen would miss. An example counts only where it runs under StarPU's
# own eager on that shape (some need input files, a display or more workers); under each
# hetpu policy it must then exit as under eager (0, or 77 for "needs hardware absent here")
# within TIMEOUT seconds, and the MGB family must give back every device reservation.
#   bench/starpu_examples_sweep.sh BUILD_DIR [OUT_DIR]
# Environment: SHAPES ("cpu1-ocl1 cpu2-ocl2 cpu2"), POLICIES (all nine), TIMEOUT (60),
# EXAMPLES_DIR (Debian's), ONLY (a space-separated subset of example names).
# Writes OUT_DIR/runs.jsonl (one line per run: shape, policy, example, exit status, seconds,
# reservations granted and given back) and OUT_DIR/summary.txt; exits 1 if any run failed.
#
# MODE=timing measures speed instead: per node shape (SHAPES, default "cpu2 cpu1-ocl1") one
# STARPU_HOME, calibrated first by CALIBRATIONS (3) runs of each program under dmda, then
# ROUNDS (5) rounds; in each round every program runs once under every policy of POLICIES
# (default: hetpu's nine) and of BASELINES (StarPU's "dmda dmdas lws eager"), in an order
# shuffled per round. A run's time is the program's own figure where it prints one (cg's
# "Total timing", axpy's "timing ->", the ms column of lu's and cholesky's table), else its
# wall time. ONLY (default "axpy lu_implicit_example_double cholesky_implicit vector_scal")
# picks the programs; ARGS_<program> sets their arguments (lu's and cholesky's default to
# "-size 1280 -nblocks 8"). Writes OUT_DIR/timing.jsonl and OUT_DIR/timing.md:
# per shape, program and policy the median over rounds of the time over the best StarPU
# policy's time in the same round, and per policy the geometric mean over programs of its
# median ratio to dmda. A program that fails under dmda on a shape is not timed there (said
# in timing.md). RESUME=1 keeps OUT_DIR/timing.jsonl's rows of the shapes not run now. Exits
# 1 if a timed run fails.
set -euo pipefail
build=${1:?usage: starpu_examples_sweep.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/starpu_examples}
build=$(cd "$build" && pwd)
preload=$build/.libs/libhetpu-preload.so
examples=${EXAMPLES_DIR:-/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/starpu/examples}
mode=${MODE:-exit}
case "$mode" in exit | timing) ;; *) echo "MODE=$mode: use exit (the default) or timing" >&2; exit 1 ;; esac
if [ "$mode" = timing ]; then
  shapes=(${SHAPES:-cpu2 cpu1-ocl1})
  ONLY=${ONLY:-axpy lu_implicit_example_double cholesky_implicit vector_scal}
  # Over 100 ms of work under StarPU's best on 2 CPUs, yet a whole round in minutes.
  : "${ARGS_lu_implicit_example_double=-size 1280 -nblocks 8}" "${ARGS_cholesky_implicit=-size 1280 -nblocks 8}"
  export ARGS_lu_implicit_example_double ARGS_cholesky_implicit
else
  shapes=(${SHAPES:-cpu1-ocl1 cpu2-ocl2 cpu2})
fi
policies=(${POLICIES:-greedy plb-hac hdss hepopta htpopta mgb mgb-exact sa cg})
baselines=(${BASELINES:-dmda dmdas lws eager})
rounds=${ROUNDS:-5}
calibrations=${CALIBRATIONS:-3}
timeout_s=${TIMEOUT:-60}
[ -f "$preload" ] || { echo "build first: make -C $build" >&2; exit 1; }
[ -d "$examples" ] || { echo "no StarPU examples in $examples (apt-get install starpu-examples)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "starpu_examples_sweep.sh needs python3" >&2; exit 1; }
theirs=$(ldd "$examples/hello_world" 2>/dev/null | awk '/libstarpu-/ {print $3; exit}')
ours=$(ldd "$preload" | awk '/libstarpu-/ {print $3; exit}')
[ -n "$theirs" ] && [ "$theirs" = "$ours" ] ||
  { echo "the examples use ${theirs:-no StarPU}, hetpu was built against ${ours:-no StarPU}" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
runs=$out/runs.jsonl
: >"$runs"

if [ -n "${ONLY:-}" ]; then
  programs=($ONLY)
else
  programs=()
  for f in "$examples"/*; do
    [ -x "$f" ] && [ -f "$f" ] && head -c 4 "$f" | grep -q ELF && programs+=("$(basename "$f")")
  done
fi

shape_vars() {  # shape -> SHAPE_VARS, the environment of that node
  case "$1" in
    cpu1-ocl1) SHAPE_VARS=(STARPU_NCPU=1 STARPU_NOPENCL=1) ;;
    cpu2-ocl2) SHAPE_VARS=(STARPU_NCPU=2 STARPU_NOPENCL=2 "POCL_DEVICES=pthread pthread") ;;
    cpu2) SHAPE_VARS=(STARPU_NCPU=2 STARPU_NOPENCL=0) ;;
    *) echo "unknown shape $1 (cpu1-ocl1, cpu2-ocl2 or cpu2)" >&2; exit 1 ;;
  esac
}

run_one() {  # shape policy example -> prints "status seconds granted released"
  local shape=$1 policy=$2 prog=$3 home status=0 start end granted=0 released=0 pre=() sched=$2
  home=$(mktemp -d "$work/run.XXXXXX")
  [ "$policy" = eager ] || pre=(LD_PRELOAD="$preload")
  shape_vars "$shape"
  start=$(date +%s.%N)
  (cd "$home" && env "${SHAPE_VARS[@]}" STARPU_OPENCL_ON_CPUS=1 STARPU_NCUDA=0 STARPU_SILENT=1 STARPU_HOME="$home" HETPU_HOME="$home/hetpu" \
    HETPU_LEDGER="$home/ledger.sqlite" HETPU_MGB_ARBITER=off HETPU_MGB_TRACE="$home/grants.jsonl" \
    "${pre[@]}" STARPU_SCHED="$sched" timeout -k 5 "$timeout_s" "$examples/$prog" </dev/null >"$home/out" 2>&1) ||
    status=$?
  end=$(date +%s.%N)
  if [ -f "$home/grants.jsonl" ]; then
    granted=$(grep -c '"event":"grant"' "$home/grants.jsonl" || true)
    released=$(grep -c '"event":"release"' "$home/grants.jsonl" || true)
  fi
  [ "$status" -eq 0 ] || [ "$status" -eq 77 ] || tail -3 "$home/out" >"$work/last_$shape.$policy.$prog"
  rm -rf "$home"
  echo "$status $(python3 -c "print('%.2f' % ($end - $start))") $granted $released"
}

is_starpu_policy() {  # StarPU's own policies run without hetpu's preload library
  case "$1" in eager | dmda | dmdas | dmdar | lws | ws | prio | random | heft | modular-*) return 0 ;; *) return 1 ;; esac
}

# A timed run in the shape's calibrated home: prints "status wall_s own_s" (own_s: the
# program's own figure, or "null").
time_one() {  # shape home policy example
  local shape=$1 home=$2 policy=$3 prog=$4 status=0 start end pre=() args var
  is_starpu_policy "$policy" || pre=(LD_PRELOAD="$preload")
  shape_vars "$shape"
  var="ARGS_${prog//[^A-Za-z0-9_]/_}"
  read -r -a args <<<"${!var:-}"
  start=$(date +%s.%N)
  (cd "$home" && env "${SHAPE_VARS[@]}" STARPU_OPENCL_ON_CPUS=1 STARPU_NCUDA=0 STARPU_SILENT=1 STARPU_HOME="$home" \
    HETPU_HOME="$home/hetpu" HETPU_LEDGER="$home/ledger.sqlite" HETPU_MGB_ARBITER=off \
    "${pre[@]}" STARPU_SCHED="$policy" timeout -k 5 "$timeout_s" "$examples/$prog" "${args[@]}" </dev/null \
    >"$home/out" 2>&1) || status=$?
  end=$(date +%s.%N)
  [ "$status" -eq 0 ] || tail -3 "$home/out" >"$work/last_$shape.$policy.$prog"
  python3 - "$home/out" "$start" "$end" "$status" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
own = None
m = re.search(r"Total timing\s*:\s*([0-9.eE+-]+)\s*seconds", text)  # cg
if m: own = float(m.group(1))
m = m or re.search(r"timing\s*->\s*([0-9.eE+-]+)\s*us", text)  # axpy
if m and own is None: own = float(m.group(1)) * 1e-6
if own is None:  # lu, cholesky: "# size ms GFlop/s" then the figures
    m = re.search(r"^#\s*size\s+ms\b.*\n\s*\S+\s+([0-9.]+)", text, re.M)
    if m: own = float(m.group(1)) * 1e-3
print(sys.argv[4], "%.3f" % (float(sys.argv[3]) - float(sys.argv[2])), "null" if own is None else "%.6f" % own)
PY
}

timing_mode() {
  local timing=$out/timing.jsonl shape home prog p round st wall own order
  if [ -n "${RESUME:-}" ] && [ -f "$timing" ]; then  # keep the rows of the shapes not run now
    python3 - "$timing" "${shapes[@]}" <<'PY'
import json, sys
keep = [l for l in open(sys.argv[1]) if json.loads(l)["shape"] not in sys.argv[2:]]
open(sys.argv[1], "w").writelines(keep)
PY
  else
    : >"$timing"
  fi
  for shape in "${shapes[@]}"; do
    home="$work/home-$shape"
    mkdir -p "$home"
    echo "== $shape: calibrating StarPU's models ($calibrations runs of each program under dmda)"
    local timed=()
    for prog in "${programs[@]}"; do
      st=0
      for ((c = 0; c < calibrations && st == 0; c++)); do
        read -r st wall own < <(time_one "$shape" "$home" dmda "$prog")
      done
      if [ "$st" -eq 0 ]; then
        timed+=("$prog")
      else
        echo "  $prog fails under dmda on $shape (exit $st), not timed there: $(tr '\n' ' ' <"$work/last_$shape.dmda.$prog")"
        printf '{"shape":"%s","example":"%s","untimed":"exit %s under dmda"}\n' "$shape" "$prog" "$st" >>"$timing"
      fi
    done
    for ((round = 1; round <= rounds; round++)); do
      echo "== $shape: round $round of $rounds"
      for prog in "${timed[@]}"; do
        order=$(printf '%s\n' "${policies[@]}" "${baselines[@]}" | shuf)
        for p in $order; do
          read -r st wall own < <(time_one "$shape" "$home" "$p" "$prog")
          printf '{"shape":"%s","round":%d,"policy":"%s","example":"%s","status":%s,"wall_s":%s,"own_s":%s}\n' \
            "$shape" "$round" "$p" "$prog" "$st" "$wall" "$own" >>"$timing"
        done
      done
    done
  done
  python3 - "$timing" "$out/timing.md" "${baselines[*]}" "${policies[*]}" <<'PY'
import collections, json, math, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
untimed = [r for r in rows if "untimed" in r]
rows = [r for r in rows if "untimed" not in r]
baselines = sys.argv[3].split()
failed = [r for r in rows if r["status"] != 0]
t = {}
for r in rows:
    if r["status"] == 0:
        t[(r["shape"], r["example"], r["round"], r["policy"])] = r["own_s"] if r["own_s"] is not None else r["wall_s"]
ran = {r["policy"] for r in rows}
hetpu = [p for p in sys.argv[4].split() if p in ran and p not in baselines]
out = []
for shape in dict.fromkeys(r["shape"] for r in rows):
    progs = list(dict.fromkeys(r["example"] for r in rows if r["shape"] == shape))
    rounds = sorted({r["round"] for r in rows if r["shape"] == shape})
    out.append(f"\n**{shape}**: median over {len(rounds)} rounds of time / best StarPU policy's time "
               f"({', '.join(baselines)}) in the same round; last row: geometric mean over programs of the median "
               "time / dmda's\n")
    out.append("| program | best StarPU (median s) | " + " | ".join(hetpu + baselines) + " |")
    out.append("|---|---|" + "---|" * len(hetpu + baselines))
    vs_dmda = collections.defaultdict(list)
    for prog in progs:
        best = {}
        for rd in rounds:
            b = [t[(shape, prog, rd, p)] for p in baselines if (shape, prog, rd, p) in t]
            if b:
                best[rd] = min(b)
        cells = []
        for p in hetpu + baselines:
            ratios = [t[(shape, prog, rd, p)] / best[rd] for rd in rounds if (shape, prog, rd, p) in t and rd in best]
            cells.append("%.2f" % statistics.median(ratios) if ratios else "fail")
            d = [t[(shape, prog, rd, p)] / t[(shape, prog, rd, "dmda")] for rd in rounds
                 if (shape, prog, rd, p) in t and (shape, prog, rd, "dmda") in t]
            if d:
                vs_dmda[p].append(statistics.median(d))
        out.append(f"| {prog} | {statistics.median(best.values()):.3f} | " + " | ".join(cells) + " |")
    out.append("| geomean / dmda | | " + " | ".join(
        "%.2f" % math.exp(sum(map(math.log, vs_dmda[p])) / len(vs_dmda[p])) if vs_dmda[p] else "-"
        for p in hetpu + baselines) + " |")
for r in untimed:
    out.append(f"\nNot timed on {r['shape']}: {r['example']} ({r['untimed']})")
for r in failed:
    out.append(f"\nFAIL {r['shape']} round {r['round']} {r['policy']} {r['example']}: exit {r['status']}")
text = "\n".join(out).lstrip("\n")
print(text)
open(sys.argv[2], "w").write(text + "\n")
sys.exit(1 if failed else 0)
PY
}

record() {  # shape policy example status seconds granted released
  printf '{"shape":"%s","policy":"%s","example":"%s","status":%s,"seconds":%s,"granted":%s,"released":%s}\n' \
    "$@" >>"$runs"
}

if [ "$mode" = timing ]; then
  command -v shuf >/dev/null || { echo "MODE=timing needs shuf (coreutils)" >&2; exit 1; }
  timing_mode
  exit $?
fi

n=0
for shape in "${shapes[@]}"; do
  shape_vars "$shape"
  echo "== $shape: ${#programs[@]} examples under eager, then under ${policies[*]}"
  for prog in "${programs[@]}"; do
    read -r st secs g r < <(run_one "$shape" eager "$prog")
    record "$shape" eager "$prog" "$st" "$secs" "$g" "$r"
    [ "$st" -eq 0 ] || [ "$st" -eq 77 ] || continue  # does not run here even under StarPU alone
    for p in "${policies[@]}"; do
      read -r s2 secs g r < <(run_one "$shape" "$p" "$prog")
      record "$shape" "$p" "$prog" "$s2" "$secs" "$g" "$r"
      n=$((n + 1))
    done
    printf '  %-34s done\n' "$prog"
  done
done

python3 - "$runs" "$out/summary.txt" "$work" <<'PY'
import collections, json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
eager = {(r["shape"], r["example"]): r["status"] for r in rows if r["policy"] == "eager"}
lines, bad = [], 0
for shape in dict.fromkeys(r["shape"] for r in rows):
    usable = [e for (s, e), st in eager.items() if s == shape and st in (0, 77)]
    lines.append(f"== {shape}: {len(usable)} examples run under eager here "
                 f"({sum(1 for (s, _), st in eager.items() if s == shape and st not in (0, 77))} do not)")
    per = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        if r["shape"] != shape or r["policy"] == "eager":
            continue
        ok = r["status"] == eager[(shape, r["example"])] and r["granted"] == r["released"]
        per[r["policy"]][0 if ok else 1] += 1
        if not ok:
            bad += 1
            why = f"exit {r['status']} (eager {eager[(shape, r['example'])]})"
            if r["granted"] != r["released"]:
                why += f", {r['granted']} reservations granted, {r['released']} given back"
            last = os.path.join(sys.argv[3], f"last_{shape}.{r['policy']}.{r['example']}")
            tail = open(last).read().strip().replace("\n", " | ")[:160] if os.path.exists(last) else ""
            lines.append(f"  FAIL {r['policy']:<9} {r['example']:<30} {why} {tail}")
    lines.append("  " + "  ".join(f"{p}: {ok}/{ok + ko}" for p, (ok, ko) in per.items()))
lines.append(f"{bad} failed run(s)")
text = "\n".join(lines)
print(text)
open(sys.argv[2], "w").write(text + "\n")
sys.exit(1 if bad else 0)
PY
