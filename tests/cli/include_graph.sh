#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/include_graph.py: the source tree has no include cycle between top-level folders and
# no policy family included from outside it; and the check fails, naming the include to
# remove, on a copy of the tree with a cycle planted, and on one with a family included by
# a library.
src=$(cd "$(dirname "$0")/../.." && pwd)
check="$src/tools/include_graph.py"
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-include-graph.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$check" --root "$src" >"$work/out" 2>&1 || fail "the source tree breaks the include rules: $(cat "$work/out")"
grep -q "no cycle, no policy family included from outside it" "$work/out" || fail "pass message: $(cat "$work/out")"

# A copy of the sources (no build trees: a distcheck builds inside the source tree).
copy() {
    rm -rf "$work/tree" && mkdir "$work/tree"
    (cd "$src" && for d in */; do
        case "$d" in _*) continue ;; esac
        cp -R "$d" "$work/tree/"
    done)
    chmod -R u+w "$work/tree"
}

# The cycle the node arbiter removed: its share clock including the accounting hook, which
# includes the share clock.
copy
printf '#include "accounting_hook/shared_devices.h"\n' >>"$work/tree/node_arbiter/share_clock.cpp"
if python3 "$check" --root "$work/tree" >"$work/out" 2>&1; then
    fail "a planted cycle passed: $(cat "$work/out")"
fi
grep -q "^include cycle between top-level folders: accounting_hook -> node_arbiter -> accounting_hook\$" "$work/out" ||
    fail "cycle message: $(cat "$work/out")"
grep -q "node_arbiter/share_clock.cpp:[0-9]*: #include \"accounting_hook/shared_devices.h\"  (node_arbiter -> accounting_hook)" \
    "$work/out" || fail "the planted include is not named: $(cat "$work/out")"
grep -q "remove the include(s) of accounting_hook/ from node_arbiter/" "$work/out" ||
    fail "which include to remove is not said: $(cat "$work/out")"

# A longer cycle, through three folders.
copy
printf '#include "tools/mgb/mgb_command.h"\n' >>"$work/tree/common/settings.cpp"
if python3 "$check" --root "$work/tree" >"$work/out" 2>&1; then
    fail "a planted three-folder cycle passed: $(cat "$work/out")"
fi
grep -q "common/settings.cpp:[0-9]*: #include \"tools/mgb/mgb_command.h\"  (common -> tools)" "$work/out" ||
    fail "three-folder cycle: $(cat "$work/out")"

# A library reaching into a policy family (the checkpoint cache into MGB's core).
copy
printf '#include "sched_policies/mgb/core/gpu_ledger.h"\n' >>"$work/tree/ckpt_backend/starpu_cache_arbiter.cpp"
if python3 "$check" --root "$work/tree" >"$work/out" 2>&1; then
    fail "a family included from ckpt_backend passed: $(cat "$work/out")"
fi
grep -q "^ckpt_backend/starpu_cache_arbiter.cpp:[0-9]*: remove #include \"sched_policies/mgb/core/gpu_ledger.h\"" "$work/out" ||
    fail "family message: $(cat "$work/out")"
grep -q "cycle" "$work/out" && fail "no cycle was planted, one is reported: $(cat "$work/out")"

# One family into another is refused too; the hetpu tool driving a family's core is not.
copy
printf '#include "sched_policies/hdss/core/hdss_planner.h"\n' >>"$work/tree/sched_policies/mgb/mgb.cpp"
printf '#include "sched_policies/mgb/core/wait_queue.h"\n' >>"$work/tree/tools/mgb/mgb_command.cpp"
if python3 "$check" --root "$work/tree" >"$work/out" 2>&1; then
    fail "one family including another passed: $(cat "$work/out")"
fi
grep -q "^sched_policies/mgb/mgb.cpp:[0-9]*: remove #include \"sched_policies/hdss/core/hdss_planner.h\"" "$work/out" ||
    fail "family into family: $(cat "$work/out")"
grep -q "tools/mgb/mgb_command.cpp" "$work/out" && fail "tools/ may drive a family's core: $(cat "$work/out")"
grep -q "^include_graph: 1 problem(s)\$" "$work/out" || fail "problem count: $(cat "$work/out")"

echo "include_graph: ok"
