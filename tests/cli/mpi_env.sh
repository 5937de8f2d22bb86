# Sourced by the multi-rank shell tests: skips (77) without MPI support or mpirun, and
# defines hetpu_mpirun, which launches ranks on this one machine the way that works here:
# oversubscribed, unbound (bound ranks hung with 4 ranks), StarPU's workers unbound too,
# each launch under a watchdog so a hang fails the test instead of stalling make check.
. "$(dirname "$0")/node_env.sh"
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
hetpu_mpirun() {
    timeout -k 10 "$MPI_TIMEOUT" mpirun --oversubscribe --bind-to none --allow-run-as-root -q \
        -x STARPU_WORKERS_NOBIND=1 -x STARPU_HOME -x STARPU_SILENT -x HETPU_LEDGER -x STARPU_NCUDA \
        -x POCL_MAX_PTHREAD_COUNT "$@"
}
