#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A random time/energy profile CSV for `hetpu pareto`: p processors of m noisy, non-monotone
points (sizes drawn from 1..2m, t = a x (0.6..1.4), e = b x (0.6..1.4), a and b spread 1:8),
the same for the same seed. Prints the capacity (the sum of the largest sizes).
Usage: python3 bench/random_profile.py PATH P M [SEED]   (default seed 7)
"""
import random
import sys


def write_profile(path, p, m, seed):
    """Writes the profile to path; returns its capacity."""
    rng = random.Random(seed)
    rows, cap = ["processor,size,time_s,energy_j"], 0
    for i in range(p):
        a, b = 1e-3 * rng.uniform(1, 8), 0.1 * rng.uniform(1, 8)
        sizes = sorted(rng.sample(range(1, 2 * m + 1), m))
        cap += sizes[-1]
        for x in sizes:
            rows.append("cpu%d,%d,%.9g,%.9g" % (i, x, a * x * (0.6 + 0.8 * rng.random()),
                                                b * x * (0.6 + 0.8 * rng.random())))
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")
    return cap


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[-1])
    print(write_profile(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                        int(sys.argv[4]) if len(sys.argv) == 5 else 7))
