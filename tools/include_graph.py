#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks hetpu's include graph between top-level folders.

Two rules, each failing with the include to remove:

1. No include cycle between top-level folders (common/, runtime/, node_arbiter/, ...): a
   folder that includes another must never be included back by it, directly or through
   others, so that each folder can be read, built and tested above the ones it uses.
2. A policy family (sched_policies/<family>/) is included only from inside itself. Other
   libraries reach shared services through their own folders (node_arbiter/, runtime/), never
   through a policy. Two kinds of file are exempt: the files directly in sched_policies/ (the
   planner catalog and the StarPU registration: the one place where every family is
   registered), and the front ends that exist to drive a family's pure core (FRONT_ENDS: the
   hetpu tool, the benchmarks, the tests).

Usage: include_graph.py [--root DIR] [--dot]
Exit status: 0 when both rules hold, 1 when one is broken (every violation is printed).
"""

import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".cu")
# Folders whose programs drive a policy family's core on purpose: `hetpu sim`, `hetpu mgb`,
# the benchmarks, the tests. No library links them, so they close no cycle by including a
# family.
FRONT_ENDS = ("tools", "bench", "tests")
FAMILY_ROOT = "sched_policies"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def top_folders(root):
    """Top-level source folders: not hidden, not build trees (_build, _build-cuda, ...)."""
    return sorted(
        name
        for name in os.listdir(root)
        if os.path.isdir(os.path.join(root, name)) and not name.startswith((".", "_"))
    )


def source_files(root, folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def included_folder(root, folders, target):
    """The top-level folder an include names, or None (system header, sibling file)."""
    first = target.split("/", 1)[0]
    if "/" in target and first in folders:
        return first
    # Public headers are included as "hetpu/x.h" through -Iinclude.
    if os.path.isfile(os.path.join(root, "include", target)):
        return "include"
    return None


def family_of(path):
    """'mgb' for sched_policies/mgb/..., None for anything else (sched_policies/x.cpp too)."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == FAMILY_ROOT:
        return parts[1]
    return None


def registers_families(path):
    """sched_policies/planner_catalog.cpp and its siblings: they name every family once."""
    parts = path.split("/")
    return len(parts) == 2 and parts[0] == FAMILY_ROOT


def scan(root):
    """Every include between two different top-level folders, and every family include."""
    folders = set(top_folders(root))
    edges = {}  # (from folder, to folder) -> [(file, line, target)]
    family_includes = []  # (file, line, target, family)
    for folder in sorted(folders):
        for path in source_files(root, folder):
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for number, text in enumerate(f, 1):
                    match = INCLUDE.match(text)
                    if not match:
                        continue
                    target = match.group(1)
                    to = included_folder(root, folders, target)
                    if to and to != folder:
                        edges.setdefault((folder, to), []).append((path, number, target))
                    family = family_of(target)
                    if family and family_of(path) != family and not registers_families(path):
                        family_includes.append((path, number, target, family))
    return folders, edges, family_includes


def strongly_connected(nodes, edges):
    """Tarjan's algorithm: the components with more than one folder (each holds a cycle)."""
    successors = {n: sorted({b for (a, b) in edges if a == n}) for n in nodes}
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in successors[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return components


def cycle_in(component, edges):
    """One cycle through the component's first folder, as a list of folders (closed)."""
    members = set(component)
    start = component[0]
    # Breadth-first from start inside the component back to start: the shortest cycle.
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for (a, b) in sorted(edges):
                if a != node or b not in members:
                    continue
                if b == start:
                    return paths[node] + [start]
                if b not in paths:
                    paths[b] = paths[node] + [b]
                    following.append(b)
        frontier = following
    return [start, start]


def report_cycles(folders, edges):
    problems = 0
    for component in strongly_connected(folders, edges):
        cycle = cycle_in(component, edges)
        print("include cycle between top-level folders: " + " -> ".join(cycle), file=sys.stderr)
        steps = list(zip(cycle, cycle[1:]))
        # The edge carried by the fewest includes is the cheapest to cut.
        cut = min(steps, key=lambda step: (len(edges[step]), step))
        for step in steps:
            for path, number, target in edges[step]:
                print(f"  {path}:{number}: #include \"{target}\"  ({step[0]} -> {step[1]})", file=sys.stderr)
        print(f"  remove the include(s) of {cut[1]}/ from {cut[0]}/ listed above "
              f"(or move the code they need into a folder both may use)", file=sys.stderr)
        problems += 1
    return problems


def report_families(family_includes):
    problems = 0
    for path, number, target, family in family_includes:
        if path.split("/", 1)[0] in FRONT_ENDS:
            continue
        print(f"{path}:{number}: remove #include \"{target}\": the policy family "
              f"{FAMILY_ROOT}/{family}/ is included only from inside itself (move what is "
              f"shared into its own top-level folder, as node_arbiter/)", file=sys.stderr)
        problems += 1
    return problems


def print_dot(edges):
    print("digraph includes {")
    for (a, b), includes in sorted(edges.items()):
        print(f'  "{a}" -> "{b}" [label="{len(includes)}"];')
    print("}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--root", default=default_root, help="source tree (default: this script's)")
    parser.add_argument("--dot", action="store_true", help="also print the folder graph (Graphviz)")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, FAMILY_ROOT)):
        print(f"include_graph: {args.root} has no {FAMILY_ROOT}/: pass --root with hetpu's source tree",
              file=sys.stderr)
        return 2
    folders, edges, family_includes = scan(args.root)
    if args.dot:
        print_dot(edges)
    problems = report_cycles(folders, edges) + report_families(family_includes)
    if problems:
        print(f"include_graph: {problems} problem(s)", file=sys.stderr)
        return 1
    print(f"include_graph: {len(folders)} folders, {len(edges)} folder dependencies, no cycle, "
          f"no policy family included from outside it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
