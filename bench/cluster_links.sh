#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hetpu's per-node planner on real (shaped) links, one rank slowed: four nodes on this machine
# (network namespaces, tests/cluster/netns_cluster.sh), three on 1 Gbit/s links and one on
# 50 Mbit/s, MPI over TCP. Every rank has one CPU worker except the slowed one, which has only
# PoCL's one-thread OpenCL device. Two cases: the slowed rank on a fast link (node1) and on
# the slow link (node3). In each, matmul (verified) runs REPS times with no saved node rates
# (a first run: a fresh HETPU_HOME per rank) and REPS times with them kept (the same homes
# from run to run, after one warm-up run), interleaved. Prints, per case: median makespans and
# their ratio (first / kept, the target is <= 1.3), the bytes each node sent by hetpu's record
# and by its link's kernel counter, and the links the runner measured. Then the same cluster
# for `hetpu cluster-sim` (each node one unit at its measured throughput, the slowed one as a
# slowdown of the others' type, so a simulated first run knows no more than a real one; the
# measured links), first run and --known-rates, beside the measured makespans.
#
# Usage: bench/cluster_links.sh BUILD_DIR [REPS] [OUT_DIR]   (root; N=matmul size, default 4096; ~5 min)
# Writes OUT_DIR/cluster_links.md (the table), OUT_DIR/runs.jsonl (every run's record, tagged)
# and OUT_DIR/sim.jsonl (cluster-sim's results). Exits 77, saying why, where it cannot run.
set -uo pipefail
build=$(cd "${1:?usage: cluster_links.sh BUILD_DIR [REPS] [OUT_DIR]}" && pwd) || exit 1
reps=${2:-3}
out=${3:-$build/bench-out/cluster_links}
size=${N:-4096}
top=$(cd "$(dirname "$0")/.." && pwd)
matmul=$build/apps/matmul/hetpu-matmul
hetpu=$build/tools/hetpu
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "cluster_links.sh: $*" >&2; exit 1; }
[ -x "$matmul" ] || die "no $matmul (make -C $build apps/matmul/hetpu-matmul)"
[ -x "$hetpu" ] || die "no $hetpu (make -C $build tools/hetpu)"
grep -q '^#define HETPU_HAVE_MPI 1' "$build/config.h" || skip "built without MPI"
grep -q '^#define HETPU_HAVE_OPENCL 1' "$build/config.h" || skip "built without OpenCL: the slowed rank runs on PoCL"
command -v mpirun >/dev/null 2>&1 || skip "no mpirun (apt-get install openmpi-bin)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to read the run records"
# Root, ip and tc are checked here (exit 77 saying why); it removes the cluster on exit.
. "$top/tests/cluster/netns_cluster.sh"
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
work=$cluster_dir
export STARPU_HOME=$work/starpu STARPU_SILENT=1 HETPU_ACCOUNTING=0 POCL_MAX_PTHREAD_COUNT=1 MPI_TIMEOUT=300
mkdir -p "$STARPU_HOME"
# Each rank its own StarPU home (heterogeneous ranks would race on one's bus calibration) and
# its own hetpu home, as nodes of a cluster have: RATES_HOME/rank<N>.
rank_home=$work/rank_home.sh
cat >"$rank_home" <<'SH'
#!/bin/sh
rank=${OMPI_COMM_WORLD_RANK:-0}
export STARPU_HOME="$STARPU_HOME/rank$rank" HETPU_HOME="$RATES_HOME/rank$rank"
mkdir -p "$STARPU_HOME" "$HETPU_HOME"
exec "$@"
SH
chmod +x "$rank_home"

cluster_up "1gbit 1gbit 1gbit 50mbit" || die "could not build the cluster (see above)"

# launch SLOW_RANK RATES_HOME JSON: matmul per-node on the four nodes, rank SLOW_RANK on PoCL
# only. Every app context gets its own -x options (OpenMPI applies them per context).
launch() {
    # --tag-output: a failure names its rank.
    local slow=$1 json=$2 before=() after=() r args=(--tag-output)
    export RATES_HOME=$3
    local common=(-x STARPU_WORKERS_NOBIND=1 -x STARPU_HOME -x RATES_HOME -x STARPU_SILENT -x HETPU_ACCOUNTING
        -x POCL_MAX_PTHREAD_COUNT -x STARPU_SCHED=plb-hac -x HETPU_MPI_PLANNER=per-node -x STARPU_NCUDA=0)
    local prog=("$rank_home" "$matmul" -n "$size" --verify --json "$json")
    local fast=("${common[@]}" -x STARPU_NCPU=1 -x STARPU_NOPENCL=0 "${prog[@]}")
    local slowed=("${common[@]}" -x STARPU_NCPU=0 -x STARPU_NOPENCL=1 -x STARPU_OPENCL_ON_CPUS=1 "${prog[@]}")
    [ "$slow" -gt 0 ] && args+=(-np "$slow" "${fast[@]}" :)
    args+=(-np 1 "${slowed[@]}")
    [ "$slow" -lt 3 ] && args+=(: -np $((3 - slow)) "${fast[@]}")
    for r in 0 1 2 3; do before[r]=$(cluster_tx_bytes node$r); done
    rm -f "$json"
    cluster_mpirun "${args[@]}" >"$work/out" 2>&1 || { cat "$work/out" >&2; die "matmul failed (slowed rank $slow)"; }
    for r in 0 1 2 3; do after[r]=$(( $(cluster_tx_bytes node$r) - before[r] )); done
    echo "${after[*]}"
}

# record CASE KIND REP JSON KERNEL-BYTES...: the run's record, tagged, into runs.jsonl.
record() {
    python3 - "$@" >>"$out/runs.jsonl" <<'PY' || die "bad record from $4 (see above)"
import json, sys
case, kind, rep, path = sys.argv[1:5]
kernel = [int(x) for x in sys.argv[5:]]
lines = open(path).read().splitlines()
assert len(lines) == 1, "expected one JSON line, got %d" % len(lines)
r = json.loads(lines[0])
assert r["verified"] is True and r["ranks"] == 4 and r["mpi_planner"] == "per-node", r
r.update({"bench_case": case, "bench_kind": kind, "bench_rep": int(rep), "kernel_tx_bytes": kernel})
print(json.dumps(r))
PY
}

: >"$out/runs.jsonl"
for slow in 1 3; do
    case_name="slowed node$slow"
    kept=$work/kept$slow
    echo "== $case_name: warm-up (fills the kept homes; PoCL compiles its kernels once)" >&2
    launch "$slow" "$work/run.jsonl" "$kept" >/dev/null
    for rep in $(seq 1 "$reps"); do
        # Interleaved, the order alternating so drift in the host's load favours neither.
        order="first kept"
        [ $((rep % 2)) -eq 0 ] && order="kept first"
        for kind in $order; do
            home=$kept
            [ "$kind" = first ] && home=$work/first$slow.$rep
            echo "== $case_name: $kind run $rep/$reps" >&2
            tx=$(launch "$slow" "$work/run.jsonl" "$home") || exit 1
            # shellcheck disable=SC2086
            record "$case_name" "$kind" "$rep" "$work/run.jsonl" $tx
        done
    done
done

# The same cluster for cluster-sim, per case: one unit per node at the node's measured
# throughput (elements per busy second, median over the case's runs), the slowed node as a
# slowdown of the fast nodes' type (a real first run knows no speeds: equal shares by PU
# count; a simulated one takes its shares from the units' nominal speeds, so these must be
# equal), links as measured by the runner (median), matmul's data per column (B's in, C's out).
python3 - "$out" "$size" <<'PY' || die "could not write the simulated clusters"
import json, statistics, sys
out, size = sys.argv[1], int(sys.argv[2])
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
granule = 16 if size % 16 == 0 else 1
for case in sorted({r["bench_case"] for r in runs}):
    rs = [r for r in runs if r["bench_case"] == case]
    slow = int(case[-1])
    def node_rate(r, rank):
        el = sum(w["elements"] for w in r["workers"] if w["rank"] == rank)
        busy = sum(w["busy_s"] for w in r["workers"] if w["rank"] == rank)
        return el / busy if busy > 0 and el > 0 else None
    rate = []
    for rank in range(4):
        xs = [x for x in (node_rate(r, rank) for r in rs) if x]
        rate.append(statistics.median(xs))
    link = []
    for rank in range(4):
        rep = [[x for x in r["rank_reports"] if x["rank"] == rank][0] for r in rs]
        link.append([statistics.median(x["link_latency_s"] for x in rep), statistics.median(x["link_bytes_per_s"] for x in rep)])
    fast = statistics.median(rate[k] for k in range(4) if k != slow)
    def profile(r):
        return [[granule, granule / r], [size, size / r]]
    types = {}
    nodes = []
    for k in range(4):
        # One type per node (its own link), every one the fast nodes' unit; the slowed
        # node's speed as a slowdown of it.
        types["N%d" % k] = {"link": link[k], "units": [{"name": "cpu0", "class": "cpu", "profile": profile(fast)}]}
        node = {"type": "N%d" % k}
        if k == slow:
            node["slowdown"] = fast / rate[k]
        nodes.append(node)
    cluster = {"workload": size, "granule": granule, "x_init": max(granule, size // 64 // granule * granule),
               "bytes_in": 8 * size, "bytes_out": 8 * size, "rank0_link": link[0], "node_types": types, "nodes": nodes}
    name = case.replace(" ", "_")
    json.dump(cluster, open("%s/sim_%s.json" % (out, name), "w"), indent=1)
    print("%s: node rates (columns per busy second) %s, links (Mbit/s) %s" % (
        case, " / ".join("%.0f" % x for x in rate), " / ".join("%.0f" % (l[1] * 8e-6) for l in link)), file=sys.stderr)
PY
: >"$out/sim.jsonl"
for slow in 1 3; do
    for kind in first kept; do
        extra=()
        [ "$kind" = kept ] && extra=(--known-rates)
        for seed in 1 2 3; do
            "$hetpu" cluster-sim --cluster "$out/sim_slowed_node$slow.json" --policy plb-hac --mode per-node \
                --seed "$seed" --json "${extra[@]}" |
                python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["bench_case"]=sys.argv[1]; r["bench_kind"]=sys.argv[2]; print(json.dumps(r))' \
                    "slowed node$slow" "$kind" >>"$out/sim.jsonl" || die "cluster-sim failed on $out/sim_slowed_node$slow.json"
        done
    done
done

python3 - "$out" "$size" "$reps" <<'PY' | tee "$out/cluster_links.md"
import json, statistics, sys
out, size, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
sims = [json.loads(l) for l in open(out + "/sim.jsonl")]
med = statistics.median
def rep(r, rank):
    return [x for x in r["rank_reports"] if x["rank"] == rank][0]
print("matmul n = %d (double, verified), per-node planner under plb-hac, 4 namespaced nodes: links 1 / 1 / 1 Gbit/s "
      "and 50 Mbit/s (node3), one CPU worker per node except the slowed one (PoCL's one-thread OpenCL device); "
      "%d first runs (no saved node rates) and %d with them kept, interleaved; medians." % (size, reps, reps))
print()
print("| slowed node (its link) | first run (s) | kept (s) | first / kept | simulated first (s) | simulated kept (s) | measured / simulated, first / kept |")
print("|---|---:|---:|---:|---:|---:|---:|")
for case in sorted({r["bench_case"] for r in runs}):
    slow = int(case[-1])
    ms = {k: [r["makespan_s"] for r in runs if r["bench_case"] == case and r["bench_kind"] == k] for k in ("first", "kept")}
    sm = {k: [s["makespan_s"] for s in sims if s["bench_case"] == case and s["bench_kind"] == k] for k in ("first", "kept")}
    f, k = med(ms["first"]), med(ms["kept"])
    print("| node%d (%s) | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | **%.2f** | %.2f | %.2f | %.2f / %.2f |" % (
        slow, "50 Mbit/s" if slow == 3 else "1 Gbit/s", f, min(ms["first"]), max(ms["first"]), k, min(ms["kept"]),
        max(ms["kept"]), f / k, med(sm["first"]), med(sm["kept"]), f / med(sm["first"]), k / med(sm["kept"])))
print()
print("| slowed node | run | columns per node 0 / 1 / 2 / 3 | moves | hetpu's bytes sent, node 0 / 1 / 2 / 3 | link's bytes sent (kernel) | links measured (Mbit/s) |")
print("|---|---|---|---:|---|---|---|")
for case in sorted({r["bench_case"] for r in runs}):
    for kind in ("first", "kept"):
        rs = [r for r in runs if r["bench_case"] == case and r["bench_kind"] == kind]
        cols = [med(rep(r, n)["elements"] for r in rs) for n in range(4)]
        sent = [med(rep(r, n)["data_bytes_sent"] + rep(r, n)["control_bytes_sent"] for r in rs) for n in range(4)]
        kern = [med(r["kernel_tx_bytes"][n] for r in rs) for n in range(4)]
        mbit = [med(rep(r, n)["link_bytes_per_s"] * 8e-6 for r in rs) for n in range(4)]
        print("| %s | %s | %s | %g | %s | %s | %s |" % (
            case[-5:], kind, " / ".join("%g" % c for c in cols), med(r["moves"] for r in rs),
            " / ".join("{:,.0f}".format(s) for s in sent), " / ".join("{:,.0f}".format(s) for s in kern),
            " / ".join("%.0f" % m for m in mbit)))
PY
