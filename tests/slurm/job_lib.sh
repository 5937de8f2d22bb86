# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the tests of tests/slurm (bash, run by slurm_check.sh with the cluster up and
# SLURM_CONF set): paths, and what Slurm says about a job. Every wait is bounded.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
build=$HETPU_BUILDDIR
# shellcheck disable=SC2034  # used by the tests that source this file
matmul=$build/apps/matmul/hetpu-matmul
# shellcheck disable=SC2034
kmeans=$build/apps/kmeans/hetpu-kmeans
# shellcheck disable=SC2034
hetpu=$build/tools/hetpu
d=$HETPU_TEST_DIR
check_ledger() { python3 "$HETPU_SLURM_TESTS/check_ledger.py" "$HETPU_LEDGER" "$HETPU_SITE" "$@"; }

# sacct_job ID [FIELDS]: the allocation's line in Slurm's accounting database once the job
# has ended there (slurmctld sends it to slurmdbd shortly after the end), '|'-separated;
# FIELDS must all be ones Slurm fills in for every job.
sacct_job() {
    local id=$1 fields=${2:-JobID,Partition,AllocTRES,State,ExitCode} line i
    for ((i = 0; i < 600; i++)); do
        line=$(sacct -n -X -P -j "$id" -o "State,$fields" 2>/dev/null | head -n 1)
        # Ended, and every field filled in (slurmdbd may hear of the end before the start,
        # whose message carries the partition).
        case "$line" in
            *'||'* | *'|') ;;
            COMPLETED* | CANCELLED* | FAILED* | TIMEOUT* | OUT_OF_ME* | NODE_FAIL*) echo "${line#*|}"; return 0 ;;
        esac
        sleep 0.5
    done
    fail "job $id did not end in Slurm's accounting within 300 s: $(sacct -j "$id" 2>&1)"
}

# The AllocTRES of each numbered step of job ID, one per line.
sacct_step_tres() { sacct -n -P -j "$1" -o JobID,AllocTRES | sed -n "s/^$1\.[0-9]*|//p"; }

# The numbered steps of job ID (ID.0, ID.1, ...; not ID.batch or ID.extern), one per line.
sacct_steps() { sacct -n -P -j "$1" -o JobID,State | grep -E "^$1\.[0-9]+\|" || true; }

# field NAME FILE: NAME=value from `scontrol show job -o` output.
field() { tr ' ' '\n' <"$2" | sed -n "s/^$1=//p" | head -n 1; }

# wait_state ID STATE SECONDS: squeue shows the job in STATE (R, PD...).
wait_state() {
    local i
    for ((i = 0; i < $3 * 5; i++)); do
        [ "$(squeue -h -j "$1" -o %t 2>/dev/null)" = "$2" ] && return 0
        sleep 0.2
    done
    fail "job $1 not in state $2 after $3 s: $(squeue -j "$1" 2>&1)"
}

# The per-rank StarPU home of the MPI tests (tests/cli/mpi_env.sh): ranks starting together
# would otherwise read each other's half-written calibration files.
rank_home=$d/rank_home.sh
cat >"$rank_home" <<'SH'
#!/bin/sh
STARPU_HOME="$STARPU_HOME/rank${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-0}}"
export STARPU_HOME
mkdir -p "$STARPU_HOME"
exec "$@"
SH
chmod +x "$rank_home"
