#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# An unmodified StarPU program (linked against StarPU only) runs under a hetpu policy
# through LD_PRELOAD=libhetpu-preload.so.
. "$(dirname "$0")/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/plain_starpu"
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
[ -x "$prog" ] || fail "missing $prog"
[ -f "$preload" ] || fail "missing $preload"
out=$STARPU_HOME/out; err=$STARPU_HOME/err

# The program itself does not link hetpu.
if ldd "$prog" | grep -q libhetpu; then fail "plain_starpu must not be linked against hetpu"; fi

LD_PRELOAD=$preload STARPU_SCHED=greedy HETPU_VERBOSE=1 "$prog" >"$out" 2>"$err" || { cat "$err"; fail "greedy run failed"; }
grep -q "hetpu: policy greedy on 1 CPU + 1 OpenCL worker" "$err" || { cat "$err"; fail "verbose line missing"; }
grep -q "50 tasks done" "$out" || fail "program did not complete"

# hetpu's planner policies schedule an unmodified program's ordinary tasks too.
for p in plb-hac hdss; do
    LD_PRELOAD=$preload STARPU_SCHED=$p HETPU_VERBOSE=1 "$prog" >"$out" 2>"$err" || { cat "$err"; fail "$p run failed"; }
    grep -q "hetpu: policy $p on" "$err" && grep -q "50 tasks done" "$out" || { cat "$err" "$out"; fail "$p run"; }
done

# StarPU's built-ins are reachable through the same path.
LD_PRELOAD=$preload STARPU_SCHED=dmda HETPU_VERBOSE=1 "$prog" >"$out" 2>"$err" || { cat "$err"; fail "dmda run failed"; }
grep -q "hetpu: policy dmda on" "$err" || { cat "$err"; fail "dmda not named"; }

# An unknown name is an error that lists the valid names, not a silent fallback.
if LD_PRELOAD=$preload STARPU_SCHED=nonexistent "$prog" >"$out" 2>"$err"; then fail "unknown policy accepted"; fi
grep -q "unknown scheduling policy 'nonexistent'" "$err" || { cat "$err"; fail "no error message"; }
grep -q "greedy" "$err" && grep -q "dmda" "$err" || fail "valid names not listed"

# help lists the policies and exits successfully.
LD_PRELOAD=$preload STARPU_SCHED=help "$prog" >"$out" 2>"$err" || fail "help exited non-zero"
grep -q "hetpu policies:" "$out" && grep -q "StarPU built-in policies:" "$out" || { cat "$out"; fail "help output"; }
echo "preload: ok"
