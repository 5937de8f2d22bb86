#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The four apps with a backup copy of every block (HETPU_BACKUP_ALL=1): results unchanged.
#
# 1. Bit for bit, on a node of two CPU workers with fixed blocks (eager, --block): the block
#    boundaries are the same with and without copies, and a block and its copy run the same
#    CPU code on the same input, so whichever of the two ends first gives the same bits.
#    (On the CPU + OpenCL node the copy of a CPU block runs PoCL's code, whose rounding may
#    differ: those runs are checked against each app's reference instead, below.) matmul's C,
#    fft2d's transform and grn's best subsets are compared by the digest of their bytes;
#    k-means' centroids and labels by their files.
# 2. On the CPU + OpenCL test node, under plb-hac and under StarPU's eager and dmda: every
#    app verified against its reference, every element counted once, copies run.
# Nothing here depends on timing: which copy of a block ends first changes nothing checked.
. "$(dirname "$0")/node_env.sh"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
d=$STARPU_HOME
bin=$HETPU_BUILDDIR/apps
for app in matmul fft2d grn kmeans; do
    [ -x "$bin/$app/hetpu-$app" ] || fail "$bin/$app/hetpu-$app not built"
done

# app_args APP: a small problem of each app, fixed blocks where the policy has no planner.
app_args() {
    case $1 in
        matmul) echo "-n 192 -m 96 -k 64 --block 32" ;;
        fft2d) echo "-m 64 -n 64 --block 8" ;;
        grn) echo "--generate 24 --samples 60 -k 2 --block 40" ;;
        kmeans) echo "--generate 3000 --dims 3 -k 4 --block 400" ;;
    esac
}

# run LABEL APP ENV... : one verified run, its JSON line in $d/LABEL.jsonl (k-means also
# writes its centroids and labels next to it).
run() {
    label=$1 app=$2
    shift 2
    extra=""
    [ "$app" = kmeans ] && extra="--centroids $d/$label.csv --assignments $d/$label.txt"
    # shellcheck disable=SC2046,SC2086
    env "$@" "$bin/$app/hetpu-$app" $(app_args "$app") $extra --verify --json "$d/$label.jsonl" \
        >"$d/$label.out" 2>&1 || { cat "$d/$label.out" >&2; fail "$app ($label) failed"; }
}

# check LABEL APP COPIES: verified, every element once, and copies run (1) or none (0).
check() {
    python3 - "$d/$1.jsonl" "$2" "$3" <<'PY' || fail "$2 ($1): JSON line is wrong (see above)"
import json, sys
r = json.loads(open(sys.argv[1]).read())
app, copies = sys.argv[2], sys.argv[3] == "1"
assert r["app"] == app and r["verified"] is True, r
totals = {"matmul": 192, "fft2d": 64 + 64, "grn": None, "kmeans": 3000 * r.get("passes", 0)}
elements = sum(w["elements"] for w in r["workers"])
if totals[app] is not None:
    assert elements == totals[app], (elements, totals[app], r["workers"])
if copies:
    assert r.get("copies", 0) > 0, "HETPU_BACKUP_ALL=1 ran no copy: %s" % r
    assert 0 <= r["copies_kept"] <= r["copies"] and r["copies_lost_s"] >= 0, r
else:
    assert "copies" not in r, r
PY
}

digest() { python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read())["digest"])' "$d/$1.jsonl"; }

# 1. Two CPU workers, fixed blocks: with copies, bit-identical.
cpus="STARPU_NOPENCL=0 STARPU_NCPU=2 STARPU_SCHED=eager"
for app in matmul fft2d grn kmeans; do
    # shellcheck disable=SC2086
    run "$app-plain" "$app" $cpus
    # shellcheck disable=SC2086
    run "$app-copies" "$app" $cpus HETPU_BACKUP_ALL=1
    check "$app-plain" "$app" 0
    check "$app-copies" "$app" 1
    if [ "$app" = kmeans ]; then
        cmp -s "$d/$app-plain.csv" "$d/$app-copies.csv" || fail "k-means centroids differ with copies"
        cmp -s "$d/$app-plain.txt" "$d/$app-copies.txt" || fail "k-means labels differ with copies"
    else
        [ "$(digest "$app-plain")" = "$(digest "$app-copies")" ] ||
            fail "$app: the result with copies differs from the one without ($(digest "$app-plain") vs $(digest "$app-copies"))"
    fi
done

# 2. The CPU + OpenCL node, under the planner and StarPU's policies, with copies.
for policy in plb-hac eager dmda; do
    for app in matmul fft2d grn kmeans; do
        run "$app-$policy" "$app" STARPU_SCHED="$policy" HETPU_BACKUP_ALL=1
        check "$app-$policy" "$app" 1
    done
done
echo "backup copies: results unchanged in every app"
