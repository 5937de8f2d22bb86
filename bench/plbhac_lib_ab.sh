#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two builds of libhetpu on one app of a real node, interleaved run by run:
# what a planner change is worth there, measured against the build before it in the same
# minutes (the node's speed drifts by more than most changes between two separate benches).
#   bench/plbhac_lib_ab.sh BUILD_DIR LIBDIR_A LIBDIR_B APP [RUNS]
# LIBDIR_A/B hold a libhetpu.so.0 each (copy BUILD_DIR/.libs/libhetpu.so* there after
# building each version); the app's binary and hetpu's other libraries come from BUILD_DIR
# (.libs/, without libtool's wrapper, so that LD_LIBRARY_PATH picks the library). APP: mm3072, mm4096, grn or kmeans
# (as bench/plbhac_node_limit.sh). RUNS per build (8). Environment: POLICY (plb-hac), and the
# node as bench/real_node_apps.sh reads it: NODE_GPU (opencl: the CPU + OpenCL node; cuda: a
# CPU + CUDA one), NODE_NCPU.
# Each build keeps its own HETPU_HOME and trains once (discarded) before the measured runs.
# Prints per build the median, min and max makespan, and B's median over A's.
set -euo pipefail
build=${1:?usage: plbhac_lib_ab.sh BUILD_DIR LIBDIR_A LIBDIR_B APP [RUNS]}
lib_a=${2:?LIBDIR_A} lib_b=${3:?LIBDIR_B} app=${4:?APP} runs=${5:-8}
policy=${POLICY:-plb-hac}
for d in "$lib_a" "$lib_b"; do
  [ -e "$d/libhetpu.so.0" ] || { echo "$d has no libhetpu.so.0: cp $build/.libs/libhetpu.so* $d/" >&2; exit 1; }
done
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/real_node_apps.sh"
real_node_cmd "$app" .libs/
cmd=("${app_cmd[@]}")
node_workers whole
export STARPU_SCHED=$policy
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
export STARPU_HOME=$work HETPU_LEDGER=$work/ledger.sqlite
one() {  # label libdir [json]
  LD_LIBRARY_PATH=$2:$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HETPU_HOME=$work/home-$1 "${cmd[@]}" ${3:+--json "$3"} >"$work/last.log" 2>&1 ||
    { cat "$work/last.log"; echo "$app with build $1 failed" >&2; exit 1; }
}
one A "$lib_a"
one B "$lib_b"
: >"$work/runs.txt"
for ((r = 0; r < runs; r++)); do
  for label in A B; do
    lib=$lib_a
    [ $label = B ] && lib=$lib_b
    rm -f "$work/one.json"
    one $label "$lib" "$work/one.json"
    python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert r.get("verified") is not False, "verification failed"
print(sys.argv[2], r["makespan_s"])' "$work/one.json" $label >>"$work/runs.txt"
    printf 'run %d/%d build %s: %s s\n' "$((r + 1))" "$runs" "$label" "$(tail -1 "$work/runs.txt" | cut -d' ' -f2)"
  done
done
python3 - "$work/runs.txt" "$app" "$lib_a" "$lib_b" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for label, lib in (("A", sys.argv[3]), ("B", sys.argv[4])):
    ms = [float(t) for l, t in rows if l == label]
    med[label] = st.median(ms)
    print("%s build %s (%s): %d runs, median %.3f s, min %.3f, max %.3f" % (sys.argv[2], label, lib, len(ms),
          med[label], min(ms), max(ms)))
print("%s: B / A = %.3f (medians; below 1: B is faster)" % (sys.argv[2], med["B"] / med["A"]))
PY
