#!/bin/sh
# Bad input and faults (issue 18): each gives a non-zero exit and a message naming the
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
# The exact optimum has a bound: 1e12 granules would need terabytes.
echo '{"workload": 1000000000000, "granule": 1, "units": [{"name": "u", "profile": [[1, 1], [2, 2]]}]}' >"$d/huge.json"
expect_error "sim optimum 1e12" "optimum: the exact optimum search is limited to" \
    "$tool" sim --scenario "$d/huge.json" --policy optimum

# --json on a full disk: every app fails and says so (the lines were once lost with exit 0).
export STARPU_SCHED=eager
for app in matmul fft2d grn kmeans; do
    bin="$HETPU_BUILDDIR/apps/$app/$app"
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
echo "bad input: ok"
