# SPDX-License-Identifier: LGPL-2.1-or-later
"""Whether one run of a real-node app (a JSON line of its --json output) checked its result:
matmul and fft2d say so themselves ("verified"), grn must recover the planted network exactly, and a
k-means run counts when it reported an inertia (the benches compare inertias across runs).
Imported by plbhac_node_limit.sh and plbhac_static_split.sh."""


def verified(run):
    if run.get("verified") is not None:
        return bool(run["verified"])
    if "edge_recall" in run:
        return run["edge_precision"] == 1.0 and run["edge_recall"] == 1.0
    return "inertia" in run
