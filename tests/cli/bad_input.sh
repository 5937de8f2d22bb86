#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Bad input and faults: each gives a non-zero exit and a message naming the
# problem, never an abort, a hang or a silent success.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
d=$STARPU_HOME

# expect_error WHAT EXPECTED-MESSAGE COMMAND...: exits 1 or 2 (not a signal: 128+) and says it.
expect_error() {
    what=$1; expect=$2; shift 2
    "$@" >"$d/out" 2>"$d/err"
    rc=$?
    [ $rc -ne 0 ] || fail "$what: exit 0"
    [ $rc -lt 128 ] || fail "$what: killed by signal $((rc - 128)): $(cat "$d/err")"
    grep -q -- "$expect" "$d/err" || fail "$what: message lacks '$expect': $(cat "$d/err")"
}

# A JSON number that overflows a double (nlohmann's out_of_range, once an abort).
echo '{"workload": 6e666, "units": [{"name": "u", "profile": [[1, 1], [2, 2]]}]}' >"$d/overflow.json"
expect_error "sim 6e666" "scenario: .*number overflow" "$tool" sim --scenario "$d/overflow.json" --policy greedy
# A directory where the scenario file is expected.
mkdir "$d/adir"
expect_error "sim directory" "'$d/adir': is a directory, not a file" "$tool" sim --scenario "$d/adir" --policy greedy
# The exact optimum of 1e12 granules: its candidate list once grew past 8 GB; past its bound
# the search now bisects on the makespan, in bounded memory (checked under a 2 GiB cap).
echo '{"workload": 1000000000000, "granule": 1, "units": [{"name": "u", "profile": [[1, 1], [2, 2]]}, {"name": "v", "profile": [[1, 2], [2, 4]]}]}' >"$d/huge.json"
( ulimit -v 2097152; "$tool" sim --scenario "$d/huge.json" --policy optimum >"$d/out" 2>"$d/err" ) \
    || fail "sim optimum 1e12 in bounded memory: $(cat "$d/err")"

# --json on a full disk: every app fails and says so (the lines were once lost with exit 0).
export STARPU_SCHED=eager
for app in matmul fft2d grn kmeans; do
    bin="$HETPU_BUILDDIR/apps/$app/hetpu-$app"
    [ -x "$bin" ] || fail "$bin not built"
    case $app in
        matmul) args="-n 64 --block 32" ;;
        fft2d) args="-n 16 --block 8" ;;
        grn) args="--generate 12 --samples 20 -k 1" ;;
        kmeans) args="--generate 500 --dims 2 -k 3" ;;
    esac
    # shellcheck disable=SC2086
    expect_error "$app --json /dev/full" "writing --json file '/dev/full' failed: No space left on device" \
        "$bin" $args --json /dev/full
done

# A second run on a checkpoint directory in use is refused with the holder's PID. The
# holder is stopped (SIGSTOP) once its first version is on disk, so it holds the lock
# for as long as the test needs, however fast or slow the machine.
km="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
ck=$d/ckpt
# The run of kmeans_restart.sh: at least 50 iterations, so it is far from done when stopped.
"$km" --generate 50000 --dims 2 -k 50 --blobs 50 --sigma 25 --seed 5 --block 5000 --tol 0 --max-iter 3000 \
    --checkpoint-every 1 --checkpoint-dir "$ck" >"$d/holder.out" 2>&1 &
holder=$!
tries=0
until ls "$ck"/kmeans.v*.manifest >/dev/null 2>&1; do
    kill -0 $holder 2>/dev/null || { cat "$d/holder.out"; fail "the holder run ended before its first checkpoint"; }
    tries=$((tries + 1))
    [ $tries -lt 30000 ] || { kill -9 $holder; fail "no checkpoint in $ck"; }
    sleep 0.01
done
kill -STOP $holder
kill -0 $holder 2>/dev/null || fail "the holder run finished before it was stopped: make it longer"
expect_error "second run on $ck" "checkpoint directory '$ck' is in use by process $holder" \
    "$km" --generate 500 --dims 2 -k 3 --checkpoint-every 1 --checkpoint-dir "$ck" --restart
kill -9 $holder
wait $holder 2>/dev/null
echo "bad input: ok"
