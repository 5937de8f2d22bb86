#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ./run cuda-check: hetpu against StarPU 1.4 with CUDA, built and tested without a GPU.
# Debian 12's StarPU (1.3.10, what ./run check tests) has no CUDA workers and is the old
# series; this builds Debian's StarPU 1.4.10 source package (from sid, deb-src only) with
# CUDA into a cache, then hetpu against it with warnings as errors, then the whole make check
# (the tests that need a CUDA device skip). One StarPU build covers both the 1.4 API
# (runtime/start/starpu_compat.h, STARPU_SCHED_LIB) and hetpu's CUDA paths.
# Usage: .ci/cuda-check.sh TOP_SRCDIR JOBS [--starpu-only]
#   --starpu-only  only the cached StarPU build; its prefix is the last line of the output
#                  (bench/gpu_node.sh builds hetpu against it on a borrowed GPU machine).
# Environment: CUDA_HOME (default /usr/local/cuda), CUDA_BUILD_DIR (default TOP/_build-cuda),
# XDG_CACHE_HOME (the StarPU build lands in $XDG_CACHE_HOME/hetpu, default ~/.cache/hetpu).
set -euo pipefail

top=$1
jobs=$2
starpu_only=${3:-}
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
build=${CUDA_BUILD_DIR:-$top/_build-cuda}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/hetpu

start=$SECONDS
step=0
nsteps=5
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
begin() { step=$((step + 1)); say "[$step/$nsteps] $* (at $(elapsed))"; }
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
die() { printf 'cuda-check: %s\n' "$*" >&2; exit 1; }
as_root() { [ "$(id -u)" -eq 0 ]; }

# ------------------------------------------------------------------ what to build
[ -x "$nvcc" ] || die "no nvcc at $nvcc: install the CUDA toolkit there or set CUDA_HOME to its root"
cuda_release=$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
[ -n "$cuda_release" ] || die "cannot read the CUDA release from '$nvcc --version'"

# The StarPU 1.4 release GPU sites build, as Debian packages it (sid's source package; Debian
# 12 has only 1.3.10). dpkg-source applies Debian's own patches (documentation and
# non-free-file removals; none touches the runtime).
starpu_source=starpu
starpu_version=1.4.10+dfsg-2
starpu_suite=sid

# memcpy-peer and starpufft use what CUDA 13 removed (cudaDeviceProp::computeMode, two cuFFT
# error codes); hetpu needs neither. No MPI: hetpu is configured --without-mpi here, so that
# Debian's StarPU-MPI (linked to Debian's libstarpu) is not mixed in. The rest saves time:
# this StarPU is for compiling and testing hetpu, not for timing it. StarPU's configure caps
# its CPU workers at the build machine's core count: --enable-maxcpus lets the same build run
# a real GPU node's cores.
starpu_flags=(
  --with-cuda-dir="$cuda" --enable-maxcpus=64 --disable-cuda-memcpy-peer --disable-starpufft --disable-mpi
  --disable-build-doc --disable-build-examples --disable-build-tests --disable-fortran
  --disable-socl --disable-static --disable-gdb CFLAGS=-O1 CXXFLAGS=-O1
)
# CUDA 13 needs no source patch for 1.4.10 (1.3.10 did: its starpu_cublas.c included cublas.h
# beside cublas_v2.h, which CUDA 13 refuses; 1.4 keeps the legacy and v2 cuBLAS APIs in
# separate files).

# A new StarPU version, CUDA release or flag is a new cache entry.
key=$(printf '%s\n' "$starpu_version" "$cuda_release" "${starpu_flags[@]}" | sha256sum | cut -c1-12)
prefix=$cache/starpu-cuda-$starpu_version-$key

say "cuda-check: StarPU $starpu_version (Debian $starpu_suite source) with CUDA $cuda_release, $jobs jobs"

# ------------------------------------------------------------------ StarPU with CUDA
ensure_source_tools() {
  command -v dpkg-source >/dev/null && return 0
  as_root || die "apt-get source needs dpkg-dev: sudo apt-get install -y dpkg-dev"
  say "installing dpkg-dev (apt-get source)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
}

# apt-get source needs a deb-src entry for the suite that carries the version. Only deb-src:
# a source index never offers binary packages, so apt never installs anything from sid. The
# sid archive is signed with keys that Debian 12's debian-archive-keyring holds.
ensure_deb_src() {
  apt-get source --print-uris -qq "$starpu_source=$starpu_version" >/dev/null 2>&1 && return 0
  as_root || die "apt-get source $starpu_source=$starpu_version found no source package: add a deb-src entry for Debian $starpu_suite (Types: deb-src only), apt-get update, and rerun"
  local list=/etc/apt/sources.list.d/hetpu-$starpu_suite-src.sources
  say "adding a deb-src entry for Debian $starpu_suite ($list)"
  printf '%s\n' "# Written by hetpu's .ci/cuda-check.sh: Debian's StarPU source, deb-src only." \
    "Types: deb-src" "URIs: http://deb.debian.org/debian" "Suites: $starpu_suite" "Components: main" \
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" >"$list"
  apt-get update -qq
  apt-get source --print-uris -qq "$starpu_source=$starpu_version" >/dev/null 2>&1 ||
    die "source package $starpu_source=$starpu_version not found in Debian $starpu_suite's deb-src (has $starpu_suite moved past it? update starpu_version)"
}

build_starpu() {
  local work=$cache/work-$key log
  rm -rf "$work" "$prefix"
  mkdir -p "$work"
  (
    cd "$work"
    apt-get source -qq --download-only "$starpu_source=$starpu_version" >fetch.out 2>&1 ||
      { cat fetch.out; die "apt-get source $starpu_source=$starpu_version failed"; }
    # dpkg-source applies Debian's own patches: the source Debian's libstarpu-dev 1.4.10 is built from.
    dpkg-source -x ./*.dsc src >>fetch.out 2>&1 || { cat fetch.out; die "dpkg-source -x failed"; }
  ) || exit 1

  begin "StarPU: configure, make -j$jobs, install into $prefix"
  mkdir -p "$work/build"
  cd "$work/build"
  log=$work/build/configure.out
  "$work/src/configure" --prefix="$prefix" "${starpu_flags[@]}" >"$log" 2>&1 ||
    { tail -40 "$log"; die "StarPU configure failed (log: $log)"; }
  grep -q 'CUDA *enabled: yes' "$log" || { grep -i cuda "$log" | tail -20; die "StarPU configure did not enable CUDA (log: $log)"; }
  log=$work/build/make.out
  { make -j"$jobs" && make install; } >"$log" 2>&1 ||
    { grep -E 'error|Error' "$log" | head -20; tail -20 "$log"; die "StarPU build failed (log: $log)"; }
  cd "$top"
  # Written last: an interrupted build is never taken for a finished one.
  touch "$prefix/.hetpu-complete"
  rm -rf "$work"
  # Builds for an older version or flag set are never used again.
  find "$cache" -mindepth 1 -maxdepth 1 -name 'starpu-cuda-*' ! -path "$prefix" -exec rm -rf {} +
}

begin "StarPU $starpu_version source with CUDA ($prefix)"
if [ -f "$prefix/.hetpu-complete" ]; then
  say "cached"
  step=$((step + 1))
else
  ensure_source_tools
  ensure_deb_src
  build_starpu
fi
if [ "$starpu_only" = --starpu-only ]; then
  echo "$prefix"
  exit 0
fi

# ------------------------------------------------------------------ hetpu against it
begin "hetpu: configure in $build"
cd "$top"
if [ ! -x configure ]; then
  out=$(autoreconf -fi 2>&1) || { printf '%s\n' "$out"; die "autoreconf failed"; }
fi
hetpu_flags=(--with-starpu="$prefix" --with-cuda="$cuda" --without-mpi --enable-werror)
# Programs linked against another StarPU build keep its path (rpath), and make sees nothing
# to redo: a new StarPU prefix means a fresh build directory.
if [ -f "$build/Makefile" ] && [ "$(cat "$build/cuda-check.flags" 2>/dev/null)" != "${hetpu_flags[*]}" ]; then
  [ -f "$build/cuda-check.flags" ] || die "$build holds a build that cuda-check did not make: remove it or set CUDA_BUILD_DIR"
  rm -rf "$build"
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$top/configure" -nt config.status ]; then
  "$top/configure" "${hetpu_flags[@]}" >configure.out 2>&1 || { tail -40 configure.out; die "hetpu configure failed"; }
  printf '%s' "${hetpu_flags[*]}" >cuda-check.flags
fi
sed -n '/^hetpu .* configuration/,$p' configure.out
grep -q "StarPU *: starpu-1.4 ${starpu_version%%+*} " configure.out || die "hetpu's configure did not find StarPU ${starpu_version%%+*} in $prefix"
grep -q 'CUDA workers *: yes' configure.out || die "hetpu does not see CUDA workers in $prefix"
grep -q 'CUDA codelets *: yes' configure.out || die "hetpu does not build its CUDA codelets"

begin "hetpu: make -j$jobs (warnings are errors)"
make -j"$jobs" >make.out 2>&1 || { grep -E 'error|Error' make.out | head -30; tail -30 make.out; die "hetpu build failed (log: $build/make.out)"; }

begin "hetpu: make check"
if ! make -j"$jobs" check >check.out 2>&1; then
  grep -E '^(PASS|SKIP|FAIL|XFAIL|XPASS|ERROR):' check.out | grep -v -E '^(PASS|SKIP|XFAIL):' || true
  find . -name '*.log' -path '*tests*' -newer Makefile -exec grep -l -E "^(FAIL|ERROR)|FAILED" {} + 2>/dev/null |
    while read -r f; do echo "---- $f"; tail -60 "$f"; done
  sed -n '/^# TOTAL/,/^# ERROR/p' check.out
  die "make check failed after $(elapsed) (log: $build/check.out)"
fi
grep -E '^SKIP:' check.out || true
sed -n '/^# TOTAL/,/^# ERROR/p' check.out
say "cuda-check passed in $(elapsed)"
