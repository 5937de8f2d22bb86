# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the multi-rank shell tests: skips (77) without MPI support or mpirun, and
# defines hetpu_mpirun, which launches ranks on this one machine the way that works here:
# oversubscribed, unbound (bound ranks hung with 4 ranks), StarPU's workers unbound too,
# each launch under a watchdog so a hang fails the test instead of stalling make check.
. "${hetpu_cli_tests:-$(dirname "$0")}/node_env.sh"
grep -q '^#define HETPU_HAVE_MPI 1' "$HETPU_BUILDDIR/config.h" || { echo "SKIP: built without MPI"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 77; }
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
have_opencl=0
grep -q '^#define HETPU_HAVE_OPENCL 1' "$HETPU_BUILDDIR/config.h" && have_opencl=1
# Every rank a single CPU worker unless an MPMD part says otherwise (node_env.sh exported
# the OpenCL worker for single-process tests).
export STARPU_NOPENCL=0 STARPU_NCPU=1
export POCL_MAX_PTHREAD_COUNT="${POCL_MAX_PTHREAD_COUNT:-1}"
MPI_TIMEOUT=${MPI_TIMEOUT:-240}
# Every rank gets its own StarPU home: StarPU (re)writes its bus calibration files there
# whenever its device configuration differs from the recorded one, and ranks starting
# together on one machine (more so heterogeneous ones) would read each other's half-written
# files and abort. Launch programs as: hetpu_mpirun ... "$rank_home" PROGRAM ARGS.
# HETPU_TEST_PRELOAD becomes LD_PRELOAD of the program only, not of this wrapper.
rank_home="$STARPU_HOME/rank_home.sh"
cat >"$rank_home" <<'SH'
#!/bin/sh
STARPU_HOME="$STARPU_HOME/rank${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}"
export STARPU_HOME
mkdir -p "$STARPU_HOME"
[ -n "${HETPU_TEST_PRELOAD:-}" ] && export LD_PRELOAD="$HETPU_TEST_PRELOAD"
exec "$@"
SH
chmod +x "$rank_home"
hetpu_mpirun() {
    timeout -k 10 "$MPI_TIMEOUT" mpirun --oversubscribe --bind-to none --allow-run-as-root -q \
        -x STARPU_WORKERS_NOBIND=1 -x STARPU_HOME -x STARPU_SILENT -x HETPU_LEDGER -x STARPU_NCUDA \
        -x POCL_MAX_PTHREAD_COUNT "$@"
}

# check_mpi_json FILE RANKS N [OPENCL]: one verified line (rank 0 writes it); every rank did
# blocks (guaranteed in a run without saved models: training sends every PU of every rank a block);
# the elements add up to N ("-": not checked); OPENCL=1: the OpenCL worker of rank 0 ran blocks.
check_mpi_json() {
    python3 - "$@" <<'PY'
import json, sys
path, ranks, n = sys.argv[1], int(sys.argv[2]), sys.argv[3]
opencl = len(sys.argv) > 4 and sys.argv[4] == "1"
lines = open(path).read().splitlines()
assert len(lines) == 1, "expected one JSON line (rank 0 only), got %d" % len(lines)
r = json.loads(lines[0])
assert r["verified"] is True, r
assert r["ranks"] == ranks, r
if n != "-":  # elements of one job (kmeans runs one job per pass: "-")
    assert sum(w["elements"] for w in r["workers"]) == int(n), r["workers"]
ids = [w["id"] for w in r["workers"]]
assert len(set(ids)) == len(ids), "worker ids repeat across ranks: %s" % ids
seen = sorted({w["rank"] for w in r["workers"]})
assert seen == list(range(ranks)), seen
for rank in range(ranks):
    done = sum(w["blocks"] for w in r["workers"] if w["rank"] == rank)
    assert done >= 1, "rank %d processed no block: %s" % (rank, r["workers"])
for w in r["workers"]:
    assert w["host"], w
    if w["rank"] > 0 and w["blocks"] > 0:
        # Remote blocks cross the network twice: their transfer time cannot be 0.
        assert w["transfer_s"] > 0, w
if opencl:
    ocl = [w for w in r["workers"] if w["type"] == "OpenCL"]
    # It ran blocks, kept or (beaten by a backup copy) thrown away.
    assert len(ocl) == 1 and ocl[0]["rank"] == 0 and (ocl[0]["blocks"] >= 1 or ocl[0].get("lost_s", 0) > 0), r["workers"]
PY
}

