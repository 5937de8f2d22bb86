#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# StarPU's own OpenMP-runtime tests (tests/openmp/ of Debian's starpu source) run many times
# under hetpu policies through the preload library, on two CPU workers, optionally beside CPU
# hogs: a stress loop for rare crashes in a policy's CPU queue (combined workers, omp
# barriers, tasks submitted from tasks). Not part of make check: it takes minutes.
#
#   tests/stress/starpu_openmp_loop.sh BUILD_DIR STARPU_SRC [RUNS] [POLICIES]
#     STARPU_SRC  an unpacked Debian starpu source (apt-get source starpu; needs deb-src entries)
#     RUNS        iterations over the programs (default 100)
#     POLICIES    default "mgb mgb-exact sa cg plb-hac hdss greedy"
#   HOGS=N (default 2) CPU hogs run beside the loop; HOGS=0 runs on a quiet machine.
#   PRELOAD_FIRST=LIB preloads LIB before hetpu's library: a sanitizer runtime for a
#   sanitized build of hetpu, e.g. ThreadSanitizer (StarPU itself is not instrumented, so
#   races inside StarPU's own code are reported without its synchronisation; read the reports
#   for hetpu frames):
#     mkdir tsan && cd tsan && ../configure CXXFLAGS="-fsanitize=thread -g -O1" \
#       CFLAGS="-fsanitize=thread -g -O1" LDFLAGS=-fsanitize=thread && make libhetpu-preload.la
#     PRELOAD_FIRST=/usr/lib/x86_64-linux-gnu/libtsan.so.2 TSAN_OPTIONS="exitcode=0 log_path=/tmp/tsan" \
#       tests/stress/starpu_openmp_loop.sh tsan STARPU_SRC 30 mgb
# Exit status: 0 when every run passed, 1 when any failed (each failure is printed), 77 when
# the StarPU sources or StarPU's OpenMP support are missing.
set -u
build=${1:?usage: starpu_openmp_loop.sh BUILD_DIR STARPU_SRC [RUNS] [POLICIES]}
src=${2:?usage: starpu_openmp_loop.sh BUILD_DIR STARPU_SRC [RUNS] [POLICIES]}
runs=${3:-100}
policies=${4:-mgb mgb-exact sa cg plb-hac hdss greedy}
preload=$(cd "$build" && pwd)/.libs/libhetpu-preload.so
[ -f "$preload" ] || { echo "no $preload: build hetpu first" >&2; exit 1; }
[ -d "$src/tests/openmp" ] || { echo "skip: no $src/tests/openmp (apt-get source starpu)" >&2; exit 77; }
pkg=$(pkg-config --exists starpu-1.4 && echo starpu-1.4 || echo starpu-1.3)
grep -q "define STARPU_OPENMP 1" "$(pkg-config --variable=includedir "$pkg")"/starpu/*/starpu_config.h 2>/dev/null ||
    { echo "skip: this StarPU has no OpenMP runtime support" >&2; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-omp.XXXXXX")
hogs=()
cleanup() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/openmp"
# StarPU's tests/helper.h needs internal headers; these programs use only this much of it.
cat >"$work/helper.h" <<'H'
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <starpu.h>
#define STARPU_TEST_SKIPPED 77
#define FPRINTF(ofile, fmt, ...) do { if (!getenv("STARPU_SSILENT")) fprintf(ofile, fmt, ## __VA_ARGS__); } while (0)
#define STARPU_UNUSED __attribute__((unused))
H
progs=()
for t in parallel_barrier_01 parallel_01 parallel_for_01 parallel_critical_01 task_01 taskwait_01 taskgroup_01; do
    cp "$src/tests/openmp/$t.c" "$work/openmp/" &&
        cc -O1 -g -fopenmp $(pkg-config --cflags "$pkg") "$work/openmp/$t.c" -o "$work/openmp/$t" \
            $(pkg-config --libs "$pkg") -lpthread 2>"$work/$t.build.log" && progs+=("$work/openmp/$t") ||
        echo "note: $t does not build here (see $work/$t.build.log); left out" >&2
done
[ ${#progs[@]} -gt 0 ] || { echo "skip: none of the OpenMP tests builds" >&2; exit 77; }

for _ in $(seq "${HOGS:-2}"); do sh -c 'while :; do :; done' & hogs+=($!); done
export STARPU_NCPU=2 STARPU_NOPENCL=0 STARPU_NCUDA=0 STARPU_SILENT=1 STARPU_SSILENT=1
export HETPU_ACCOUNTING=0 HETPU_MGB_ARBITER=off STARPU_HOME="$work/home"
mkdir -p "$STARPU_HOME"
status=0
for pol in $policies; do
    n=0 failed=0
    for _ in $(seq "$runs"); do
        for prog in "${progs[@]}"; do
            n=$((n + 1))
            STARPU_SCHED=$pol LD_PRELOAD="${PRELOAD_FIRST:+$PRELOAD_FIRST }$preload" timeout 60 "$prog" \
                >/dev/null 2>"$work/err"
            rc=$?
            if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
                failed=$((failed + 1)); status=1
                echo "FAIL: $pol $(basename "$prog") exit $rc" >&2; tail -5 "$work/err" >&2
            fi
        done
    done
    echo "$pol: $n runs, $failed failed"
done
exit $status
