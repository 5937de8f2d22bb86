#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The tables of bench/README.md (and of bench/*/README.md) are generated: each lies between
#   <!-- table: bench/recorded/NAME.md -->   and   <!-- table:end -->
# and is that file verbatim: a table a benchmark wrote under results/, copied into
# bench/recorded/ when the run is recorded (each README section names the command and the file).
# Usage: bench/update_readme_tables.sh [--check]
#   without --check: rewrite the README's tables from bench/recorded/;
#   --check: change nothing, exit 1 naming each stale or missing table (tests/cli/tree_rules.sh).
set -eu
check=0
if [ "${1:-}" = "--check" ]; then check=1; fi
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
status=0
# bench/README.md and each area's own (bench/mgb/README.md, ...).
for readme in "$top/bench/README.md" "$top"/bench/*/README.md; do
    [ -f "$readme" ] || continue
    bad=0
    awk -v top="$top" '
      /^<!-- table: [^ ]+ -->$/ {
        print; file = $3; path = top "/" file
        if ((getline line < path) <= 0) { print "missing recorded table: " file > "/dev/stderr"; bad = 1 }
        else { print line; while ((getline line < path) > 0) print line }
        close(path); skip = 1; next
      }
      /^<!-- table:end -->$/ { skip = 0 }
      !skip
      END { exit bad }' "$readme" >"$tmp" || bad=1
    if [ "$bad" = 0 ] && cmp -s "$readme" "$tmp"; then
        continue
    fi
    if [ "$check" = 1 ] || [ "$bad" != 0 ]; then
        diff -u "$readme" "$tmp" >&2 || true
        echo "${readme#"$top"/}: a table differs from its file under bench/recorded/; run bench/update_readme_tables.sh" >&2
        status=1
        continue
    fi
    cat "$tmp" >"$readme"
    echo "updated ${readme#"$top"/}"
done
exit "$status"
