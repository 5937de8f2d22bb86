#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# An unmodified StarPU program that uses more of StarPU than independent tasks (implicit
# dependencies, tags, callbacks that submit, synchronous, pinned, CPU-only and OpenCL-only
# tasks, tasks of three buffers: tests/programs/dag_starpu.c) completes with the right
# results under every hetpu policy, on the test node and on a node of two OpenCL devices and
# two CPU workers. A policy that strands a task hangs the program: `timeout` turns that into
# a failure instead of a stuck test. The MGB family must also give back every device
# reservation it granted, including those of the tasks StarPU submits itself (the
# reduction's combining tasks), which never reach a policy's post_exec_hook.
. "$(dirname "$0")/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/dag_starpu"
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
[ -x "$prog" ] || fail "missing $prog"
[ -f "$preload" ] || fail "missing $preload"
out=$STARPU_HOME/out

policies="greedy plb-hac hdss hepopta htpopta mgb mgb-exact sa cg"
run_all() { # label, then the node's environment assignments
    label=$1
    shift
    for p in $policies; do
        status=0
        grants=$STARPU_HOME/grants.jsonl
        rm -f "$grants"
        env "$@" HETPU_MGB_TRACE="$grants" LD_PRELOAD="$preload" STARPU_SCHED="$p" timeout 300 "$prog" >"$out" 2>&1 ||
            status=$?
        [ "$status" -ne 124 ] || { cat "$out"; fail "$p on $label hung (killed after 300 s)"; }
        [ "$status" -eq 0 ] || { cat "$out"; fail "$p on $label exited $status"; }
        grep -q "dag_starpu: all results right" "$out" || { cat "$out"; fail "$p on $label: no result line"; }
        case $p in mgb | mgb-exact | sa | cg)
            granted=$(grep -c '"event":"grant"' "$grants") || fail "$p on $label: no device reservation traced"
            released=$(grep -c '"event":"release"' "$grants") || true
            [ "$granted" -eq "$released" ] || fail "$p on $label: $granted reservations granted, $released given back"
            ;;
        esac
    done
}
run_all "1 CPU + 1 OpenCL worker" STARPU_NCPU=1 STARPU_NOPENCL=1
run_all "2 CPU + 2 OpenCL workers" STARPU_NCPU=2 STARPU_NOPENCL=2 POCL_DEVICES="pthread pthread"
echo "preload_dag: ok"
