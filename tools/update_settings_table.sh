#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rewrites every settings table of README.md and docs/*.md from the declarations in
# common/settings.cpp (`hetpu settings --markdown`). A table lies between
#   <!-- settings:begin -->                        every setting, or
#   <!-- settings:begin HETPU_MGB_ HETPU_CG_ -->   the settings whose names start so,
# and <!-- settings:end -->; the rows keep the declarations' order.
# Usage: tools/update_settings_table.sh [--check] [BUILD_DIR]   (default _build)
#   --check: change nothing; list the stale files and exit 1 if any (tests/cli/settings.sh).
set -eu
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/tools/hetpu" settings --markdown >"$tmp/table"
stale=0
for doc in "$top/README.md" "$top"/docs/*.md; do
    grep -q '^<!-- settings:begin' "$doc" || continue
    awk -v table="$tmp/table" '
      function emit(prefixes,   n, p, i, line, name, row) {
        n = split(prefixes, p, " ")
        row = 0
        while ((getline line < table) > 0) {
          if (++row <= 2 || n == 0) { print line; continue }
          name = line; sub(/^\| `/, "", name); sub(/`.*/, "", name)
          for (i = 1; i <= n; i++) if (index(name, p[i]) == 1) { print line; break }
        }
        close(table)
      }
      /^<!-- settings:begin( [A-Z0-9_ ]+)? -->$/ {
        print; prefixes = $0
        sub(/^<!-- settings:begin ?/, "", prefixes); sub(/ ?-->$/, "", prefixes)
        emit(prefixes); skip = 1; next
      }
      /^<!-- settings:end -->$/ { skip = 0 }
      !skip' "$doc" >"$tmp/new"
    if cmp -s "$doc" "$tmp/new"; then continue; fi
    if [ "$check" = 1 ]; then
        echo "stale settings table: ${doc#"$top"/}" >&2
        diff -u "$doc" "$tmp/new" >&2 || true
        stale=1
    else
        cat "$tmp/new" >"$doc"
        echo "updated ${doc#"$top"/}"
    fi
done
if [ "$stale" = 1 ]; then
    echo "regenerate them: tools/update_settings_table.sh [BUILD_DIR]" >&2
    exit 1
fi
