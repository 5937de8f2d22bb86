#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# StarPU 1.3.10's own test suite (the programs and scripts of its tests/ directory that
# make check runs, about 230, written by StarPU's authors, unmodified) under every hetpu
# policy through the preload library, on two node shapes. Where starpu_examples_sweep.sh
# tries the examples, this tries the programs written to break a scheduler: dependencies,
# tags, regenerated and restarted tasks, reductions, commutes, partitions, contexts,
# pause/resume, out-of-core, OpenMP, parallel tasks. The tests are built from a StarPU
# source tree (configured like Debian's package, without MPI, Fortran, FFT and SOCL) but run
# against the system's libstarpu, the one hetpu is linked to: the real binaries of
# tests/**/.libs/ without libtool's wrappers, checked with ldd. A test counts only where it
# passes under StarPU's own eager on that shape (exit 0, or 77 for "skipped"); under each
# hetpu policy it must then exit the same way within TIMEOUT seconds, and the MGB family
# must give back every device reservation. Tests run one at a time (many are timing-bound).
#   bench/starpu_test_suite.sh BUILD_DIR [OUT_DIR]
# Environment: SHAPES ("cpu2 cpu1-ocl1": STARPU_NCPU=2, or one CPU and one PoCL OpenCL
# device), POLICIES (all nine; empty: eager alone), TIMEOUT (60), ONLY (a space-separated
# subset of test names, e.g. "main/callback datawizard/commute"), STARPU_SRC (an unpacked
# StarPU 1.3.10 source tree; default: `apt-get source` of the installed library's source
# version, starpu=1.3.10+dfsg-2 on Debian 12, into CACHE, which needs a deb-src entry),
# CACHE (~/.cache/hetpu), STARPU_TESTS_BUILD (where the tests are built,
# CACHE/starpu-1.3.10-tests), JOBS (2; builds run under nice), KEEP_WORK (keep the shadow
# tree of test binaries in TMPDIR). The suite's shell scripts run as make check runs them,
# with STARPU_SCHED set, so they run their programs under that policy alone (overlap.sh and
# locality.sh skip, exit 77, unless it is dmdas or modular-eager with FxT).
# Writes OUT_DIR/runs.jsonl (one line per run: shape, policy, test, exit status, seconds,
# reservations granted and given back), OUT_DIR/summary.md and, for every run that did not
# pass, its output under OUT_DIR/logs/SHAPE/POLICY/; progress goes to stderr. Exits 1 if a
# run failed.
set -euo pipefail
build=${1:?usage: starpu_test_suite.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/starpu_test_suite}
build=$(cd "$build" && pwd)
preload=$build/.libs/libhetpu-preload.so
read -r -a shapes <<<"${SHAPES:-cpu2 cpu1-ocl1}"
read -r -a policies <<<"${POLICIES-greedy plb-hac hdss hepopta htpopta mgb mgb-exact sa cg}"
timeout_s=${TIMEOUT:-60}
cache=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hetpu}
jobs=${JOBS:-2}
version=1.3.10
[ -f "$preload" ] || { echo "build first: make -C $build" >&2; exit 1; }
command -v python3 >/dev/null || { echo "starpu_test_suite.sh needs python3" >&2; exit 1; }
ours=$(ldd "$preload" | awk '/libstarpu-/ {print $3; exit}')
ours=$(readlink -f "$ours")
[ -n "$ours" ] || { echo "$preload is not linked to a libstarpu" >&2; exit 1; }
case "$timeout_s" in '' | *[!0-9]*) echo "TIMEOUT=$timeout_s: give whole seconds" >&2; exit 1 ;; esac

# --- StarPU's source -------------------------------------------------------------------
is_source() { [ -f "$1/tests/loader.c" ] && grep -q "^AC_INIT(\[StarPU\], \[$version\]" "$1/configure.ac" 2>/dev/null; }
src=${STARPU_SRC:-}
if [ -n "$src" ]; then
  is_source "$src" || { echo "STARPU_SRC=$src is not a StarPU $version source tree" >&2; exit 1; }
else
  mkdir -p "$cache"
  for d in "$cache"/starpu-"$version"*; do is_source "$d" && src=$d && break; done
  if [ -z "$src" ]; then
    # the source of the installed library, not whatever newer starpu a deb-src line offers
    pkg=$(dpkg -S "$ours" 2>/dev/null | awk -F': ' '{print $1; exit}' || true)
    want=$(dpkg-query -W -f='${source:Package}=${source:Version}' "$pkg" 2>/dev/null || true)
    case "$want" in starpu=$version*) ;; *) want=starpu ;; esac
    echo "== fetching StarPU's source: apt-get source $want (into $cache)" >&2
    (cd "$cache" && apt-get source "$want" >"$cache/apt-get-source.log" 2>&1) || true
    for d in "$cache"/starpu-"$version"*; do is_source "$d" && src=$d && break; done
  fi
  [ -n "$src" ] || {
    cat >&2 <<EOF
no StarPU $version source: set STARPU_SRC to an unpacked starpu-$version tree, or let
\`apt-get source $want\` fetch it: that needs a deb-src entry for Debian 12 (bookworm), e.g.
/etc/apt/sources.list.d/bookworm-src.sources with "Types: deb-src", then \`apt-get update\`,
and dpkg-dev installed. apt-get said (see $cache/apt-get-source.log):
$(tail -3 "$cache/apt-get-source.log" 2>/dev/null || true)
EOF
    exit 1
  }
fi
src=$(cd "$src" && pwd)

# --- build the tests, configured with the system library's compile-time limits ---------
sys_config=$(pkg-config --variable=includedir starpu-1.3 2>/dev/null || echo /usr/include)/starpu/1.3/starpu_config.h
[ -f "$sys_config" ] || { echo "no $sys_config (apt-get install libstarpu-dev)" >&2; exit 1; }
sysdef() { awk -v n="$1" '$1 == "#define" && $2 == n {print $3; exit}' "$sys_config"; }
abi_defs="STARPU_MAXCPUS STARPU_MAXNUMANODES STARPU_MAXCUDADEVS STARPU_MAXOPENCLDEVS STARPU_MAXNODES
  STARPU_NMAXBUFS STARPU_NMAX_SCHED_CTXS STARPU_MAXIMPLEMENTATIONS STARPU_NMAXWORKERS STARPU_OPENMP STARPU_USE_OPENCL"
bdir=${STARPU_TESTS_BUILD:-$cache/starpu-$version-tests}
mkdir -p "$bdir"
bdir=$(cd "$bdir" && pwd)
if [ ! -f "$bdir/config.status" ]; then
  echo "== configuring StarPU's tests in $bdir" >&2
  (cd "$bdir" && nice -n 10 "$src/configure" --enable-quick-check --enable-openmp --enable-opencl --disable-cuda \
    --disable-build-doc --disable-build-examples --disable-mpi --disable-fortran --disable-starpufft --disable-socl \
    --disable-starpurm --disable-opengl-render \
    --enable-maxcpus="$(sysdef STARPU_MAXCPUS)" --enable-maxnumanodes="$(sysdef STARPU_MAXNUMANODES)" \
    --enable-maxcudadev="$(sysdef STARPU_MAXCUDADEVS)" --enable-maxopencldev="$(sysdef STARPU_MAXOPENCLDEVS)" \
    --enable-maxnodes="$(sysdef STARPU_MAXNODES)" --enable-maxbuffers="$(sysdef STARPU_NMAXBUFS)" \
    --enable-max-sched-ctxs="$(sysdef STARPU_NMAX_SCHED_CTXS)" \
    --enable-maximplementations="$(sysdef STARPU_MAXIMPLEMENTATIONS)" >configure.log 2>&1) ||
    { echo "configure failed: $bdir/configure.log" >&2; rm -f "$bdir/config.status"; exit 1; }
fi
for d in $abi_defs; do  # the tests' structures must be laid out as the system library's
  [ "$(sysdef "$d")" = "$(awk -v n="$d" '$1 == "#define" && $2 == n {print $3; exit}' "$bdir/include/starpu_config.h")" ] ||
    { echo "$bdir/include/starpu_config.h differs from $sys_config on $d: remove $bdir and rerun" >&2; exit 1; }
done
echo "== building StarPU's library and test programs in $bdir (make -j$jobs, under nice)" >&2
if ! { nice -n 10 make -j"$jobs" -C "$bdir/src" >"$bdir/build.log" 2>&1 &&
  nice -n 10 make -j"$jobs" -C "$bdir/tests" check TESTS= >>"$bdir/build.log" 2>&1; }; then
  echo "building StarPU's tests failed: $bdir/build.log" >&2
  exit 1
fi

mkdir -p "$out"
rm -rf "$out/logs"
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-testsuite.XXXXXX")
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
runs=$out/runs.jsonl
: >"$runs"
# Runs use a copy of hetpu's libraries: a rebuild of BUILD_DIR during the suite (a library
# briefly missing) must not fail them.
mkdir -p "$work/lib"
cp "$preload" "$work/lib/"
while read -r name path; do cp "$path" "$work/lib/$name"; done < <(ldd "$preload" | awk -v b="$build/" 'index($3, b) == 1 {print $1, $3}')
snap=$work/lib/${preload##*/}
snap_path=$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if LD_LIBRARY_PATH=$snap_path ldd "$snap" | grep -F "$build/" >&2; then
  echo "the copy of $preload still loads the above from $build" >&2
  exit 1
fi

# --- the suite: make check's TESTS, in a shadow tree of the real binaries ---------------
printf 'hetpu-print-%s:\n\t@echo %s\n' tests "\$(TESTS)" xfail "\$(XFAIL_TESTS)" >"$work/print.mk"
read -r -a all_tests <<<"$(make -s -C "$bdir/tests" -f Makefile -f "$work/print.mk" hetpu-print-tests)"
xfail=" $(make -s -C "$bdir/tests" -f Makefile -f "$work/print.mk" hetpu-print-xfail) "
[ "${#all_tests[@]}" -gt 0 ] || { echo "no TESTS in $bdir/tests/Makefile" >&2; exit 1; }
shadow=$work/tests
# Every ELF program of the build's tests/, at the path its libtool wrapper has (scripts find
# their programs next to themselves), and every script of the source's tests/.
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q ELF || continue
  rel=${f#"$bdir/tests/"}
  case "$rel" in */.libs/lt-* | */.libs/*.so*) continue ;; esac
  rel=${rel/\/.libs\//\/}
  mkdir -p "$shadow/$(dirname "$rel")"
  # the real binary wins over a non-libtool one of the same name; never a wrapper (not ELF)
  case "$f" in */.libs/*) ln -sfn "$f" "$shadow/$rel" ;; *) [ -e "$shadow/$rel" ] || ln -s "$f" "$shadow/$rel" ;; esac
done < <(find "$bdir/tests" -type f -perm -u+x ! -name '*.o' -print0)
while IFS= read -r -d '' f; do
  rel=${f#"$src/tests/"}
  mkdir -p "$shadow/$(dirname "$rel")"
  ln -sfn "$f" "$shadow/$rel"
done < <(find "$src/tests" -type f \( -name '*.sh' -o -name '*.gp' \) -print0)

tests=()
declare -A left_out=()
for t in ${ONLY:-${all_tests[*]}}; do
  if [ ! -e "$shadow/$t" ]; then
    left_out[$t]="not built"
    continue
  fi
  case "$t" in
    *.sh) ;;
    *)
      lib=$(ldd "$shadow/$t" 2>/dev/null | awk '/libstarpu-/ {print $3; exit}')
      [ -z "$lib" ] || [ ! -e "$lib" ] || lib=$(readlink -f "$lib")
      if [ -n "$lib" ] && [ "$lib" != "$ours" ]; then  # none: a test built empty here (CUDA only), kept
        left_out[$t]="links to $lib, not $ours"
        continue
      fi
      ;;
  esac
  tests+=("$t")
done

shape_vars() {  # shape -> SHAPE_VARS, the environment of that node
  case "$1" in
    cpu1-ocl1) SHAPE_VARS=(STARPU_NCPU=1 STARPU_NOPENCL=1) ;;
    cpu2) SHAPE_VARS=(STARPU_NCPU=2 STARPU_NOPENCL=0) ;;
    *) echo "unknown shape $1 (cpu2 or cpu1-ocl1)" >&2; exit 1 ;;
  esac
}
for shape in "${shapes[@]}"; do shape_vars "$shape"; done

secs() {  # start end (EPOCHREALTIME) -> seconds with two decimals
  local d=$((${2/./} - ${1/./}))
  printf '%d.%02d' $((d / 1000000)) $((d % 1000000 / 10000))
}

# One run, as make check's loader would start it (STARPU_OPENCL_PROGRAM_DIR at the source,
# top_srcdir, top_builddir), in a fresh directory that is also its STARPU_HOME.
# shape policy test eager_status -> prints "status seconds granted released"
run_one() {
  local shape=$1 policy=$2 t=$3 want=${4:-} home status=0 start end granted=0 released=0 pre=() log
  home=$(mktemp -d "$work/run.XXXXXX")
  [ "$policy" = eager ] || pre=(LD_PRELOAD="$snap" LD_LIBRARY_PATH="$snap_path")
  shape_vars "$shape"
  start=$EPOCHREALTIME
  { (cd "$home" && env -u STARPU_LAUNCH -u MAKEFLAGS -u STARPU_SUB_PARALLEL -u STARPU_BENCH_DIR "${SHAPE_VARS[@]}" \
    STARPU_OPENCL_ON_CPUS=1 STARPU_NCUDA=0 STARPU_SILENT=1 STARPU_QUICK_CHECK=1 STARPU_HOME="$home" \
    STARPU_OPENCL_PROGRAM_DIR="$src" top_srcdir="$src" top_builddir="$bdir" HETPU_HOME="$home/hetpu" \
    HETPU_LEDGER="$home/ledger.sqlite" HETPU_MGB_ARBITER=off HETPU_MGB_TRACE="$home/grants.jsonl" \
    "${pre[@]}" STARPU_SCHED="$policy" timeout -k 5 "$timeout_s" "$shadow/$t" </dev/null >"$home/out" 2>&1) ||
    status=$?; } 2>/dev/null  # no "Aborted" notices from this shell: the status says it
  end=$EPOCHREALTIME
  if [ -f "$home/grants.jsonl" ]; then
    granted=$(grep -c '"event":"grant"' "$home/grants.jsonl" || true)
    released=$(grep -c '"event":"release"' "$home/grants.jsonl" || true)
  fi
  if { [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; } || { [ -n "$want" ] && [ "$status" -ne "$want" ]; } ||
    [ "$granted" -ne "$released" ]; then
    log=$out/logs/$shape/$policy/${t//\//__}.log
    mkdir -p "$(dirname "$log")"
    { echo "# $shape $policy $t: exit $status after $(secs "$start" "$end") s${want:+ (eager: $want)}"
      cat "$home/out"; } >"$log"
  fi
  rm -rf "$home"
  echo "$status $(secs "$start" "$end") $granted $released"
}

record() {  # shape policy test status seconds granted released
  printf '{"shape":"%s","policy":"%s","test":"%s","exit":%s,"seconds":%s,"granted":%s,"released":%s}\n' \
    "$@" >>"$runs"
}

for shape in "${shapes[@]}"; do
  echo "== $shape: ${#tests[@]} tests under eager${policies[*]:+, then under ${policies[*]}} (TIMEOUT=$timeout_s)" >&2
  shape_start=$EPOCHREALTIME
  i=0
  for t in "${tests[@]}"; do
    i=$((i + 1))
    read -r st s g r < <(run_one "$shape" eager "$t")
    record "$shape" eager "$t" "$st" "$s" "$g" "$r"
    line="eager $st ${s}s"
    if [ "$st" -eq 0 ] || [ "$st" -eq 77 ]; then
      for p in "${policies[@]}"; do
        read -r s2 s g r < <(run_one "$shape" "$p" "$t" "$st")
        record "$shape" "$p" "$t" "$s2" "$s" "$g" "$r"
        if [ "$s2" -eq "$st" ] && [ "$g" -eq "$r" ]; then line+=" $p ok"; else line+=" $p FAIL(exit $s2, ${s}s, $g/$r)"; fi
      done
    else
      line+=" (not counted)"
    fi
    printf '  %s [%d/%d] %-45s %s\n' "$shape" "$i" "${#tests[@]}" "$t" "$line" >&2
  done
  echo "== $shape done in $(secs "$shape_start" "$EPOCHREALTIME") s" >&2
done

lo=$work/left_out
: >"$lo"
for t in "${!left_out[@]}"; do printf '%s\t%s\n' "$t" "${left_out[$t]}" >>"$lo"; done
python3 - "$runs" "$out/summary.md" "$lo" "$xfail" "$out/logs" "${policies[*]}" <<'PY'
import collections, json, os, sys
runs, summary, left_out, xfail, logs, policies = sys.argv[1:7]
rows = [json.loads(l) for l in open(runs)]
xfail = set(xfail.split())
eager = {(r["shape"], r["test"]): r["exit"] for r in rows if r["policy"] == "eager"}
shapes = list(dict.fromkeys(r["shape"] for r in rows))
order = ["eager"] + [p for p in policies.split()]
out = ["# StarPU 1.3.10's test suite under hetpu's policies", "",
       "A test counts where it passes under eager on that shape (exit 0, or 77: skipped); "
       "under a hetpu policy it passes when it exits as under eager and gives back every "
       "MGB reservation.", "",
       "| shape | policy | counted | passed | failed | skipped | seconds |", "|---|---|---|---|---|---|---|"]
fails, bad = [], 0
for shape in shapes:
    counted = sorted(t for (s, t), st in eager.items() if s == shape and st in (0, 77))
    for p in order:
        rs = [r for r in rows if r["shape"] == shape and r["policy"] == p]
        if not rs:
            continue
        secs = sum(r["seconds"] for r in rs)
        if p == "eager":
            ok = sum(1 for r in rs if r["exit"] == 0)
            skip = sum(1 for r in rs if r["exit"] == 77)
            out.append(f"| {shape} | eager | {len(counted)} of {len(rs)} | {ok} | - | {skip} | {secs:.0f} |")
            continue
        failed = [r for r in rs if r["exit"] != eager[(shape, r["test"])] or r["granted"] != r["released"]]
        ok = sum(1 for r in rs if r not in failed and r["exit"] == 0)
        skip = sum(1 for r in rs if r not in failed and r["exit"] == 77)
        names = ", ".join(r["test"] for r in failed)
        out.append(f"| {shape} | {p} | {len(rs)} | {ok} | {len(failed)}{': ' + names if names else ''} | {skip} | {secs:.0f} |")
        bad += len(failed)
        for r in failed:
            why = f"exit {r['exit']} (eager {eager[(shape, r['test'])]})"
            if r["granted"] != r["released"]:
                why += f", {r['granted']} reservations granted, {r['released']} given back"
            fails.append(f"- {shape} {p} `{r['test']}`: {why} after {r['seconds']} s; "
                         f"logs/{shape}/{p}/{r['test'].replace('/', '__')}.log")
out += ["", f"## Failed runs ({bad})", ""] + (fails or ["none"])
out += ["", "## Not counted: fail under eager on that shape", ""]
nc = [(s, t, st) for (s, t), st in eager.items() if st not in (0, 77)]
for s, t, st in sorted(nc):
    p = os.path.join(logs, s, "eager", t.replace("/", "__") + ".log")
    last = ""
    if os.path.exists(p):
        lines = [l.strip() for l in open(p, errors="replace") if l.strip()][1:]
        last = " | ".join(lines[-2:])[:200]
    note = " (XFAIL in StarPU's Makefile: expected to fail)" if t in xfail else ""
    out.append(f"- {s} `{t}`: exit {st}{note}: {last}")
if not nc:
    out.append("none")
out += ["", "## Left out", ""]
lines = [l.rstrip("\n").split("\t", 1) for l in open(left_out) if l.strip()]
out += [f"- `{t}`: {why}" for t, why in sorted(lines)] or ["none"]
text = "\n".join(out)
print(text)
open(summary, "w").write(text + "\n")
sys.exit(1 if bad else 0)
PY
