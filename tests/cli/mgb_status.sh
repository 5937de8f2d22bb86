#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu mgb status|reset` when no arbiter segment exists (a unique name, so a real arbiter
# of the user running the tests is never looked at or removed).
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
name="/hetpu-mgb-test-cli-$$"
export HETPU_MGB_ARBITER="$name"

"$tool" mgb status >"$STARPU_HOME/out" 2>"$STARPU_HOME/err" || fail "status without a segment must exit 0"
grep -q "^no MGB arbiter on this node: segment $name does not exist (no mgb process has run, or HETPU_MGB_ARBITER=off)\$" \
    "$STARPU_HOME/out" || fail "status message: $(cat "$STARPU_HOME/out" "$STARPU_HOME/err")"

"$tool" mgb status --json >"$STARPU_HOME/json" || fail "status --json without a segment must exit 0"
python3 - "$STARPU_HOME/json" "$name" <<'PY' || fail "status --json is wrong: $(cat "$STARPU_HOME/json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["arbiter"] == sys.argv[2], d
assert d["exists"] is False, d
assert d["devices"] == [] and d["processes"] == [], d
PY

# --arbiter beats the environment; a name without '/' gets one.
"$tool" mgb status --arbiter "hetpu-mgb-test-cli-other-$$" | grep -q "segment /hetpu-mgb-test-cli-other-$$ does not exist" \
    || fail "--arbiter not used"
# Disabled in the environment: status still looks at the user's default segment (which may
# exist, if mgb processes of this user run now: only the name is checked).
HETPU_MGB_ARBITER=off "$tool" mgb status 2>&1 | grep -q "/hetpu-mgb-$(id -u)[: ]" \
    || fail "status with HETPU_MGB_ARBITER=off"

"$tool" mgb reset >"$STARPU_HOME/out" || fail "reset without a segment must exit 0"
grep -q "nothing to reset" "$STARPU_HOME/out" || fail "reset message"

if "$tool" mgb 2>"$STARPU_HOME/err"; then fail "mgb without a subcommand accepted"; fi
if "$tool" mgb frobnicate 2>"$STARPU_HOME/err"; then fail "unknown mgb subcommand accepted"; fi
"$tool" mgb --help | grep -q "status" || fail "mgb --help"
"$tool" help | grep -q "^  mgb " || fail "mgb missing from hetpu help"
echo "hetpu mgb: ok"
