#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# StarPU 1.4's own route to a hetpu policy: STARPU_SCHED_LIB=libhetpu.so STARPU_SCHED=<name>
# makes StarPU dlopen libhetpu and ask its starpu_get_sched_lib_policy() for the name
# (runtime/start/sched_lib_exports.cpp). No hetpu_init(), no preload library: the unmodified
# program (linked against StarPU only) prints the policy StarPU runs, so a silent fallback
# to StarPU's default policy fails the test. StarPU 1.3 has no STARPU_SCHED_LIB: skipped.
. "$(dirname "$0")/node_env.sh"
case "${HETPU_STARPU_PC:?HETPU_STARPU_PC must name StarPU's pkg-config module}" in
starpu-1.3)
    echo "SKIP: StarPU 1.3 has no STARPU_SCHED_LIB (added in StarPU 1.4); hetpu is built against $HETPU_STARPU_PC"
    exit 77
    ;;
esac
prog="$HETPU_BUILDDIR/tests/programs/plain_starpu"
lib="$HETPU_BUILDDIR/.libs/libhetpu.so"
[ -x "$prog" ] || fail "missing $prog"
[ -f "$lib" ] || fail "missing $lib"
if ldd "$prog" | grep -q libhetpu; then fail "plain_starpu must not be linked against hetpu"; fi
out=$STARPU_HOME/out; err=$STARPU_HOME/err
run() { timeout 120 "$prog" >"$out" 2>"$err"; }

# The control: without the library StarPU does not know plb-hac and runs its default policy.
# This is what the checks below would see if STARPU_SCHED_LIB were ignored.
STARPU_SCHED=plb-hac run || { cat "$err"; fail "control run without STARPU_SCHED_LIB failed"; }
grep -q "plain_starpu: policy " "$out" || { cat "$out"; fail "the program did not name its policy"; }
if grep -q "plain_starpu: policy plb-hac " "$out"; then fail "plb-hac ran without STARPU_SCHED_LIB: the control proves nothing"; fi

# Every hetpu policy family, by StarPU's own mechanism; the description is hetpu's own text.
for p in plb-hac hdss greedy hepopta htpopta mgb; do
    STARPU_SCHED_LIB=$lib STARPU_SCHED=$p run || { cat "$err" "$out"; fail "$p through STARPU_SCHED_LIB failed"; }
    grep -q "plain_starpu: policy $p (" "$out" || { cat "$out" "$err"; fail "StarPU did not run hetpu's $p (fell back?)"; }
    grep -q "50 tasks done" "$out" || { cat "$out"; fail "$p: program did not complete"; }
    if [ "$p" = plb-hac ] && ! grep -q "(profile-based load balancing" "$out"; then
        cat "$out"
        fail "the plb-hac StarPU ran is not hetpu's"
    fi
done

# StarPU's built-ins stay reachable with the library loaded (it only adds names).
STARPU_SCHED_LIB=$lib STARPU_SCHED=dmda run || { cat "$err"; fail "dmda with STARPU_SCHED_LIB failed"; }
grep -q "plain_starpu: policy dmda " "$out" || { cat "$out"; fail "dmda not run"; }
echo "sched_lib: ok ($HETPU_STARPU_PC)"
