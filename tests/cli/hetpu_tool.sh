#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
"$tool" policies >"$STARPU_HOME/out" || fail "hetpu policies failed"
grep -q "^  greedy " "$STARPU_HOME/out" || fail "greedy not listed"
grep -q "^  dmda " "$STARPU_HOME/out" || fail "dmda not listed"
"$tool" version | grep -q "^hetpu " || fail "version"
if "$tool" frobnicate 2>"$STARPU_HOME/err"; then fail "unknown command accepted"; fi
grep -q "unknown command 'frobnicate'" "$STARPU_HOME/err" || fail "unknown command message"
if "$tool" 2>"$STARPU_HOME/err"; then fail "no command accepted"; fi
grep -q "Subcommands:" "$STARPU_HOME/err" || fail "no command: the command list on stderr"
"$tool" --version | grep -q "^hetpu [0-9]" || fail "--version"
# Every subcommand answers --help with its own usage line (CLI11), exit status 0.
for cmd in sim calibrate pareto su mgb mgb-sim batch models settings; do
    "$tool" --help >"$STARPU_HOME/out" || fail "hetpu --help"
    grep -q "^  $cmd " "$STARPU_HOME/out" || fail "hetpu --help does not list $cmd"
    "$tool" $cmd --help >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out"; fail "hetpu $cmd --help"; }
    grep -q "Usage: hetpu $cmd" "$STARPU_HOME/out" || { cat "$STARPU_HOME/out"; fail "hetpu $cmd --help: no usage line"; }
done
"$tool" help | grep -q "^  pareto " || fail "hetpu help"
echo "hetpu tool: ok"
