#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan, the parsers' sources
# compiled in, so they are instrumented too) and runs each for SECONDS: first over the seed
# corpus and the regression inputs (tests/fuzz/<target>/), then fuzzing from them.
#   tests/fuzz/fuzz.sh SRCDIR BUILDDIR [SECONDS]
# Prints one line per target: executions, new corpus entries, and findings (crash files).
set -eu
src=$1; build=$2; seconds=${3:-60}
cxx=${FUZZ_CXX:-clang++}
command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found (apt-get install clang)" >&2; exit 77; }
out=$build/fuzz
mkdir -p "$out"
flags="-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$src -I$src/include -I$build"
toml=$(pkg-config --cflags --libs tomlplusplus 2>/dev/null || echo "-ltomlplusplus")

# target: sources beyond the harness, and extra link flags.
deps() {
    case $1 in
        fuzz_scenario) echo "tools/sim/scenario.cpp tools/sim/simulated_unit.cpp" ;;
        fuzz_ckpt_config) echo "ckpt_backend/engine/config.cpp" ;;
        fuzz_peer_schedule) echo "ckpt_backend/core/peer_schedule.cpp" ;;
        fuzz_text_table) echo "common/text_table.cpp" ;;
        fuzz_profile_csv) echo "sched_policies/pareto/core/profile_csv.cpp sched_policies/pareto/core/pareto_profiles.cpp" ;;
        fuzz_accounting_config) echo "accounting_hook/core/partition_config.cpp accounting_hook/core/partition.cpp accounting_hook/core/benchmark_csv.cpp accounting_hook/core/slurm_billing.cpp accounting_hook/core/su_model.cpp" ;;
        fuzz_manifest) echo "ckpt_backend/core/manifest.cpp ckpt_backend/core/durable_file.cpp apps/kmeans/kmeans_checkpoint_format.cpp apps/kmeans/kmeans_data.cpp common/text_table.cpp" ;;
    esac
}
status=0
for h in "$src"/tests/fuzz/fuzz_*.cpp; do
    t=$(basename "$h" .cpp)
    files="$h"
    for f in $(deps "$t"); do files="$files $src/$f"; done
    # shellcheck disable=SC2086
    if ! $cxx $flags -o "$out/$t" $files $toml -lxxhash 2>"$out/$t.build.log"; then
        echo "fuzz: building $t failed:" >&2; tail -20 "$out/$t.build.log" >&2; exit 1
    fi
    corpus=$out/$t.corpus
    mkdir -p "$corpus" "$out/$t.findings"
    # The seeds and regressions first, one run each: a regression fails here at once.
    if [ -d "$src/tests/fuzz/$t" ]; then
        "$out/$t" -runs=0 "$src/tests/fuzz/$t" >"$out/$t.regress.log" 2>&1 || {
            echo "$t: a seed or regression input fails:" >&2; tail -30 "$out/$t.regress.log" >&2; status=1; continue; }
    fi
    seeds=
    [ -d "$src/tests/fuzz/$t" ] && seeds="$src/tests/fuzz/$t"
    # New inputs go to the first directory (in the build tree); the seeds are only read.
    # shellcheck disable=SC2086
    "$out/$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/$t.findings/" "$corpus" $seeds >"$out/$t.log" 2>&1 || status=1
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$t.log" | grep -o '[0-9]*$' || true)
    [ -n "$execs" ] || execs=$(grep -o '#[0-9]*' "$out/$t.log" | tail -1 | tr -d '#')
    findings=$(find "$out/$t.findings" -type f | wc -l)
    echo "$t: ${execs:-?} executions in ${seconds} s, corpus $(find "$corpus" -type f | wc -l) files, findings: $findings"
    [ "$findings" -eq 0 ] || { ls "$out/$t.findings" >&2; tail -40 "$out/$t.log" >&2; status=1; }
done
exit $status
