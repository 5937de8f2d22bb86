#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The multi-rank run records match docs/cluster.md: each app's record (matmul, kmeans, grn)
# under both planners is read against the table of record fields that the test parses from
# docs/cluster.md itself, so the doc and the records cannot drift apart. Every field the
# table lists for the app and planner is there with its type; every field a multi-rank
# record has beyond the app's single-process record is in the table; and the figures agree
# with each other: the ranks' elements add up to the workers' (every k-means pass, not the
# last), and central k-means' broadcast labels are in its ranks' application bytes.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"

doc="$(dirname "$0")/../../docs/cluster.md"
[ -f "$doc" ] || fail "$doc not found"
out="$STARPU_HOME/out"
export STARPU_SCHED=plb-hac
matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
kmeans="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
grn="$HETPU_BUILDDIR/apps/grn/hetpu-grn"
for app in "$matmul" "$kmeans" "$grn"; do [ -x "$app" ] || fail "$app not built"; done

# run NAME PLANNER PROGRAM ARGS: one 2-rank run ("single": one process) writing NAME.jsonl.
run() {
    name=$1 planner=$2
    shift 2
    json="$STARPU_HOME/$name-$planner.jsonl"
    rm -f "$json"
    if [ "$planner" = single ]; then
        "$@" --verify --json "$json" >"$out" 2>&1 || { cat "$out" >&2; fail "$name in one process"; }
    else
        hetpu_mpirun -np 2 -x STARPU_SCHED -x HETPU_MPI_PLANNER=$planner "$rank_home" "$@" --verify --json "$json" \
            >"$out" 2>&1 || { cat "$out" >&2; fail "$name on 2 ranks under the $planner planner"; }
    fi
}

for planner in single per-node central; do
    run matmul $planner "$matmul" -n 256 -k 128
    run kmeans $planner "$kmeans" --generate 20000 --dims 3 -k 4 --max-iter 6
    run grn $planner "$grn" --generate 24 --samples 40
done

python3 - "$doc" "$STARPU_HOME" <<'PY'
import json, re, sys

doc, home = sys.argv[1], sys.argv[2]

# The table whose header is "| field | type | planners | apps | meaning |".
rows, in_table = [], False
for line in open(doc):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if line.startswith("|") and cells[:4] == ["field", "type", "planners", "apps"]:
        in_table = True
        continue
    if in_table:
        if not line.startswith("|"):
            break
        if set(line.strip()) <= set("|-: "):
            continue
        field = cells[0].strip("`")
        planners = ["per-node", "central"] if cells[2] == "both" else [p.strip() for p in cells[2].split(",")]
        apps = [a.strip() for a in cells[3].split(",")]
        rows.append((field, cells[1], planners, apps))
assert len(rows) >= 10, "the record table of docs/cluster.md was not found (%d rows)" % len(rows)
documented = {f for f, _, _, _ in rows}

def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "pair" if len(v) == 2 and all(isinstance(x, (int, float)) for x in v) else "list"
    return type(v).__name__

def values(record, field):
    """Every value of a field: "a" at the top, "a[].b" in each entry of list a."""
    if "[]." in field:
        outer, inner = field.split("[].", 1)
        entries = record.get(outer)
        if not isinstance(entries, list) or not entries:
            return None
        return [e[inner] if inner in e else KeyError for e in entries]
    return [record[field]] if field in record else None

def record_of(name, planner):
    lines = open("%s/%s-%s.jsonl" % (home, name, planner)).read().splitlines()
    assert len(lines) == 1, "%s %s: one line expected, got %d" % (name, planner, len(lines))
    return json.loads(lines[0])

for app in ("matmul", "kmeans", "grn"):
    single = record_of(app, "single")
    single_workers = set().union(*(w.keys() for w in single["workers"]))
    for planner in ("per-node", "central"):
        r = record_of(app, planner)
        where = "%s under %s" % (app, planner)
        assert r["verified"] is True, "%s: not verified: %s" % (where, r)
        # Every documented field of this app and planner, with its type.
        for field, typ, planners, apps in rows:
            if planner not in planners or app not in apps:
                continue
            vs = values(r, field)
            assert vs is not None and KeyError not in vs, "%s: no %s (docs/cluster.md lists it)" % (where, field)
            for v in vs:
                assert kind(v) == typ, "%s: %s is %r, a %s, not a %s" % (where, field, v, kind(v), typ)
        # Every field of a multi-rank record beyond the single-process one is documented.
        extra = set(r) - set(single)
        extra |= {"workers[]." + k for w in r["workers"] for k in w if k not in single_workers}
        extra |= {"rank_reports[]." + k for e in r.get("rank_reports", []) for k in e}
        undocumented = sorted(extra - documented)
        assert not undocumented, "%s: fields not in docs/cluster.md's table: %s" % (where, undocumented)
        # The figures agree.
        reps = r["rank_reports"]
        assert [e["rank"] for e in reps] == list(range(r["ranks"])), where
        assert r["mpi_planner"] == planner, where
        workers = sum(w["elements"] for w in r["workers"])
        ranks = sum(e["elements"] for e in reps)
        assert ranks == workers, "%s: the ranks processed %d elements, the workers %d" % (where, ranks, workers)
        if planner == "central":
            assert r["moves"] == 0 and r["coordinator_s"] == 0 and r["shares_s"] == 0, where
        else:
            assert r["shares_s"] > 0, "%s: the start-up exchange of the shares took no time?" % where
            end = 0
            for e in reps:
                assert e["share"][0] == end, "%s: shares %s" % (where, [e["share"] for e in reps])
                end += e["share"][1]
        assert reps[0]["longest_silence_s"] == 0, where
        if app == "kmeans":
            # Every pass's elements: passes x n, not the last pass's n.
            assert workers == r["passes"] * r["n"], "%s: %d elements over %d passes of %d" % (where, workers, r["passes"], r["n"])
            sums = 8 * (r["k"] * (r["d"] + 1) + 2)  # one rank's partial sums, bytes
            if planner == "central":
                labels = 4 * r["n"]
                assert reps[1]["app_bytes_received"] >= r["passes"] * labels, (where, reps)
                assert reps[0]["app_bytes_sent"] >= r["passes"] * labels, (where, reps)
            else:
                assert reps[1]["app_bytes_sent"] >= r["passes"] * sums, (where, reps)
                assert reps[1]["app_bytes_received"] < r["n"], "%s: per-node k-means sends no labels: %s" % (where, reps)
        if app == "grn":
            assert reps[1]["app_bytes_sent"] == 16 * r["genes"], (where, reps)
        if app == "matmul":
            assert all(e["app_bytes_sent"] == 0 and e["app_bytes_received"] == 0 for e in reps), (where, reps)
        print("ok: %s: the record matches docs/cluster.md" % where)
PY
