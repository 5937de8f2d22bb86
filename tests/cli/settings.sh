#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The settings module (common/settings.h) against what users read and meet:
#  - every settings table of README.md and docs/*.md (between settings markers) is what
#    `hetpu settings --markdown` gives for it (regenerate them with
#    tools/update_settings_table.sh after declaring a setting), and every setting is in one;
#  - an invalid HETPU_* value fails the start of a StarPU program with a message that
#    names the variable, whichever module reads it (here MGB's);
#  - HETPU_VERBOSE=0 is off: no start-up lines, MGB's device listing included;
#  - MGB's co-location model (HETPU_MGB_COLOCATION) is said at start: time-sliced on OpenCL.
. "$(dirname "$0")/node_env.sh"
tool="$HETPU_BUILDDIR/tools/hetpu"
top="${srcdir:-$(dirname "$0")/../..}"
[ -f "$top/README.md" ] || fail "no README.md at $top"
grep -q '^<!-- settings:begin' "$top/README.md" || fail "README.md has no table between settings markers"
for doc in docs/mgb.md docs/policies.md; do
    grep -q '^<!-- settings:begin HETPU_' "$top/$doc" || fail "$doc has no generated settings table"
done
sh "$top/tools/update_settings_table.sh" --check "$HETPU_BUILDDIR" ||
    fail "a settings table differs from common/settings.cpp: run tools/update_settings_table.sh"
# Every setting is in some table a user reads (README.md's, or its module's page).
"$tool" settings --markdown | sed -n 's/^| `\(HETPU_[A-Z0-9_]*\)`.*/\1/p' | while read -r name; do
    grep -q "^| \`$name\`" "$top/README.md" "$top"/docs/*.md || fail "$name is in no settings table of README.md or docs/"
done || exit 1

# Every declared setting is listed by `hetpu settings`, with the value the environment gives.
HETPU_PLBHAC_TAIL=0.6 "$tool" settings >"$STARPU_HOME/listing" || fail "hetpu settings"
grep -q "^HETPU_PLBHAC_TAIL=0.6$" "$STARPU_HOME/listing" || fail "hetpu settings: current value not shown"
HETPU_PLBHAC_TAIL=0.6 "$tool" settings --check >/dev/null || fail "--check rejects a valid value"
if HETPU_MGB_AGING=-3 "$tool" settings --check 2>"$STARPU_HOME/err"; then fail "--check accepts HETPU_MGB_AGING=-3"; fi
grep -q "HETPU_MGB_AGING='-3' is invalid" "$STARPU_HOME/err" || { cat "$STARPU_HOME/err"; fail "--check: message"; }

# A StarPU program started through hetpu (the preload library) refuses an invalid value
# before StarPU starts, naming the variable.
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
prog="$HETPU_BUILDDIR/tests/programs/plain_starpu"
for bad in HETPU_MGB_AGING=lots HETPU_MGB_COLOCATION=mpss HETPU_VERBOSE=maybe HETPU_ENERGY=solar HETPU_PLBHAC_STEPS=2.5 HETPU_ACCOUNTING=2; do
    name=${bad%%=*}
    if env "$bad" STARPU_SCHED=mgb LD_PRELOAD="$preload" "$prog" >"$STARPU_HOME/out" 2>"$STARPU_HOME/err"; then
        cat "$STARPU_HOME/err"; fail "$bad: the program ran"
    fi
    grep -q "hetpu: $name='" "$STARPU_HOME/err" || { cat "$STARPU_HOME/err"; fail "$bad: no message naming $name"; }
done

# HETPU_VERBOSE=0 is off, 1 is on (the start-up line names the policy).
HETPU_VERBOSE=0 STARPU_SCHED=mgb LD_PRELOAD="$preload" "$prog" >"$STARPU_HOME/out" 2>"$STARPU_HOME/err" ||
    { cat "$STARPU_HOME/err"; fail "HETPU_VERBOSE=0 run"; }
if grep -q "^hetpu: policy\|^hetpu mgb: device" "$STARPU_HOME/err"; then cat "$STARPU_HOME/err"; fail "HETPU_VERBOSE=0 printed the start-up lines"; fi
HETPU_VERBOSE=1 STARPU_SCHED=mgb LD_PRELOAD="$preload" "$prog" >"$STARPU_HOME/out" 2>"$STARPU_HOME/err" ||
    { cat "$STARPU_HOME/err"; fail "HETPU_VERBOSE=1 run"; }
grep -q "^hetpu: policy mgb" "$STARPU_HOME/err" || { cat "$STARPU_HOME/err"; fail "HETPU_VERBOSE=1: no start-up line"; }
# MGB says its co-location model at start: on this OpenCL node `auto` is time-sliced (OpenCL
# has no MPS, even with a daemon's pipe in CUDA_MPS_PIPE_DIRECTORY); a set model is taken.
mkdir "$STARPU_HOME/mps" && mkfifo "$STARPU_HOME/mps/control" || fail "fake MPS pipe directory"
CUDA_MPS_PIPE_DIRECTORY=$STARPU_HOME/mps STARPU_SCHED=mgb LD_PRELOAD="$preload" "$prog" >"$STARPU_HOME/out" \
    2>"$STARPU_HOME/err" || { cat "$STARPU_HOME/err"; fail "mgb run"; }
grep -q "^hetpu mgb: co-location time-sliced (auto: OpenCL" "$STARPU_HOME/err" ||
    { cat "$STARPU_HOME/err"; fail "auto on OpenCL: not time-sliced, or not said"; }
HETPU_MGB_COLOCATION=mps STARPU_SCHED=mgb-exact LD_PRELOAD="$preload" "$prog" >"$STARPU_HOME/out" \
    2>"$STARPU_HOME/err" || { cat "$STARPU_HOME/err"; fail "mgb-exact run"; }
grep -q "^hetpu mgb-exact: co-location mps (set by HETPU_MGB_COLOCATION)" "$STARPU_HOME/err" ||
    { cat "$STARPU_HOME/err"; fail "HETPU_MGB_COLOCATION=mps not taken"; }
echo "settings: ok"
