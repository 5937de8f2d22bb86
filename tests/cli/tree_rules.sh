#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Rules of the source tree that need no build: the size limits (tools/check_code_size.py:
# files outside tests/ under 600 lines, functions under 150; README.md and bench/README.md
# within 250 and 400 lines), the benchmark tables kept in
# bench/README.md equal to the recorded outputs they are generated from
# (bench/update_readme_tables.sh --check), and no issue-tracker numbers in the sources.
top="${srcdir:-$(dirname "$0")/../..}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: no python3" >&2; exit 77; }
python3 "$top/tools/check_code_size.py" "$top" || fail "size limits (see above)"
# The two front pages stay short enough to read: the detail lives in the guides.
for page in README.md:250 bench/README.md:400; do
    file=${page%:*} limit=${page#*:}
    n=$(wc -l <"$top/$file")
    [ "$n" -le "$limit" ] || fail "$file has $n lines (at most $limit): move detail into a guide"
done
sh "$top/bench/update_readme_tables.sh" --check || fail "bench/README.md's tables are stale (see above)"
# The word "issue" followed by a number points into a tracker outside the repository: it means
# nothing to a reader.
if grep -rniE --include='*.cpp' --include='*.h' --include='*.c' --include='*.cu' --include='*.py' \
    --include='*.sh' --include='*.mk' --include='*.am' --include='*.ac' --include='*.md' \
    --exclude-dir='_*' --exclude-dir=.git --exclude-dir=results --exclude-dir=build-aux --exclude-dir=m4 \
    --exclude-dir=autom4te.cache 'issues? ?#?[0-9]' "$top"; then
    fail "issue numbers in the sources (above): say what the code does or why instead"
fi
echo "tree rules: ok"
