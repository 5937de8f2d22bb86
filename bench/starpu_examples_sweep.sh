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
set -euo pipefail
build=${1:?usage: starpu_examples_sweep.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/starpu_examples}
build=$(cd "$build" && pwd)
preload=$build/.libs/libhetpu-preload.so
examples=${EXAMPLES_DIR:-/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/starpu/examples}
shapes=(${SHAPES:-cpu1-ocl1 cpu2-ocl2 cpu2})
policies=(${POLICIES:-greedy plb-hac hdss hepopta htpopta mgb mgb-exact sa cg})
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

record() {  # shape policy example status seconds granted released
  printf '{"shape":"%s","policy":"%s","example":"%s","status":%s,"seconds":%s,"granted":%s,"released":%s}\n' \
    "$@" >>"$runs"
}

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
