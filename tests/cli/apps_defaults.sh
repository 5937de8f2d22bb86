#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The four apps as a newcomer first meets them: with no arguments each runs its default
# problem and exits 0, and with --verify alone its result checks out; --help prints the
# options (CLI11's layout) and exits 0; a bad value exits 2 with a message naming the option.
. "$(dirname "$0")/node_env.sh"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
d=$STARPU_HOME
export STARPU_SCHED=eager

for app in matmul fft2d grn kmeans; do
    bin="$HETPU_BUILDDIR/apps/$app/hetpu-$app"
    [ -x "$bin" ] || fail "$bin not built"

    "$bin" >"$d/out" 2>"$d/err" || { cat "$d/out" "$d/err" >&2; fail "$app with no arguments failed"; }
    grep -q "^$app" "$d/out" || fail "$app with no arguments printed no summary: $(cat "$d/out")"

    "$bin" --verify --json "$d/$app.jsonl" >"$d/out" 2>"$d/err" \
        || { cat "$d/out" "$d/err" >&2; fail "$app --verify (default problem) failed"; }
    python3 - "$d/$app.jsonl" "$app" <<'PY' || fail "$app: default problem's JSON line is wrong (see above)"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["app"] == sys.argv[2] and r["verified"] is True, r
assert r["makespan_s"] > 0 and sum(w["blocks"] for w in r["workers"]) > 0, r
PY

    "$bin" --help >"$d/out" 2>"$d/err" || fail "$app --help exited non-zero"
    grep -q "^Usage: hetpu-$app \[OPTIONS\]" "$d/out" || fail "$app --help: no CLI11 usage line: $(cat "$d/out")"
    grep -q -- "--json" "$d/out" || fail "$app --help does not list --json"
    grep -q "default" "$d/out" || fail "$app --help does not state the defaults"

    for bad in "--reps 0" "--reps=many" "--block -3" "--seed x"; do
        opt=${bad%%[ =]*}
        # shellcheck disable=SC2086
        "$bin" $bad >"$d/out" 2>"$d/err"
        rc=$?
        [ $rc -eq 2 ] || fail "$app $bad exited $rc, expected 2"
        grep -q -- "^$app: $opt: " "$d/err" || fail "$app $bad: message does not name $opt: $(cat "$d/err")"
    done
    "$bin" --no-such-option >"$d/out" 2>"$d/err" && fail "$app accepted --no-such-option"
    grep -q -- "--no-such-option" "$d/err" || fail "$app: unknown option not named: $(cat "$d/err")"
done
echo "apps defaults and command lines: ok"
