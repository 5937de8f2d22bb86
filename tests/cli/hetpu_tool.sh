#!/bin/sh
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
"$tool" policies >"$STARPU_HOME/out" || fail "hetpu policies failed"
grep -q "^  greedy " "$STARPU_HOME/out" || fail "greedy not listed"
grep -q "^  dmda " "$STARPU_HOME/out" || fail "dmda not listed"
"$tool" version | grep -q "^hetpu " || fail "version"
if "$tool" frobnicate 2>"$STARPU_HOME/err"; then fail "unknown command accepted"; fi
grep -q "unknown command 'frobnicate'" "$STARPU_HOME/err" || fail "unknown command message"
echo "hetpu tool: ok"
