#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rewrites README.md's table of settings (between <!-- settings:begin --> and
# <!-- settings:end -->) from the declarations in common/settings.cpp.
# Usage: tools/update_settings_table.sh [BUILD_DIR]   (default _build)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$build/tools/hetpu" settings --markdown >"$table"
awk -v table="$table" '
  /^<!-- settings:begin -->$/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^<!-- settings:end -->$/ { skip = 0 }
  !skip' "$top/README.md" >"$top/README.md.new"
mv "$top/README.md.new" "$top/README.md"
