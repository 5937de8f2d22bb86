#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hetpu under a real Slurm (./run slurm-check): starts a cluster of this machine
# (tests/slurm/cluster.sh: munged, MariaDB, slurmdbd, slurmctld, slurmd, all private), runs
# the tests below with real allocations (sbatch, srun, salloc), stops the daemons, and
# checks that none is left, also when a test fails.
#   accounting.sh     ledger rows against what Slurm reports (job id, partition, TRES, billing)
#   mpi.sh            hetpu-matmul --verify on 3 ranks under srun --mpi=pmix
#   batch_cancel.sh   hetpu batch inside salloc; scancel of a running checkpointing MGB job
# Usage: tests/slurm/slurm_check.sh SOURCE_DIR BUILD_DIR [TEST...]
set -euo pipefail
top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
shift 2
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(accounting mpi batch_cancel)
here=$top/tests/slurm

[ "$(id -u)" -eq 0 ] || { echo "slurm-check runs the Slurm daemons as root: run it as root" >&2; exit 1; }
for f in apps/matmul/hetpu-matmul apps/kmeans/hetpu-kmeans tools/hetpu; do
    [ -x "$build/$f" ] || { echo "slurm-check: $build/$f is not built" >&2; exit 1; }
done
grep -q '^#define HETPU_HAVE_MPI 1' "$build/config.h" || { echo "slurm-check: hetpu was built without MPI" >&2; exit 1; }

# Several nodes (SLURM_CHECK_NODES, default 3): each a network namespace of this machine with
# its own address and hostname (tests/cluster/netns_cluster.sh); this script runs again inside
# the first, which holds the controller, and each slurmd runs in its own. Where namespaces
# cannot be made, one node, said so.
nodes=${SLURM_CHECK_NODES:-3}
if [ "$nodes" -gt 1 ] && [ -z "${HETPU_SLURM_INSIDE:-}" ]; then
    probe="hetpu-probe-$$"
    if ip netns add "$probe" 2>/dev/null && ip netns del "$probe"; then
        set +eu
        # Each node gets a /tmp of its own, as real nodes have (Slurm's PMIx plugin keeps
        # per-step files there under fixed names); what the nodes share lives in /var/tmp.
        export TMPDIR=/var/tmp
        # shellcheck source=tests/cluster/netns_cluster.sh
        . "$top/tests/cluster/netns_cluster.sh"
        cluster_up "$(for _ in $(seq "$nodes"); do printf '1gbit '; done)" ||
            { echo "slurm-check: could not build the nodes' namespaces" >&2; exit 1; }
        entries=""
        for n in $(seq 0 $((nodes - 1))); do entries+="node$n:$(cluster_addr "node$n") "; done
        on_node=$cluster_dir/on_node
        cat >"$on_node" <<SH
#!/bin/sh
# on_node NAME COMMAND...: COMMAND inside node NAME's namespace, with NAME as its hostname and
# the machine's cgroup file systems (ip netns exec gives the node a /sys without them, and
# slurmd needs them) mounted again in the node's private mount namespace, and a /tmp of its own.
node=\$1
shift
HETPU_CGROUP_MOUNTS=\$(awk '(\$2 == "/sys/fs/cgroup" && \$3 == "tmpfs") || \$3 == "cgroup" || \$3 == "cgroup2" { print \$3, \$2, \$4 }' /proc/mounts)
export HETPU_CGROUP_MOUNTS
exec ip netns exec "${cluster_prefix}-n\${node#node}" unshare --uts sh -c '
    echo "\$HETPU_CGROUP_MOUNTS" | while read -r type dir options; do
        [ -n "\$type" ] || continue
        mkdir -p "\$dir" && mount -t "\$type" -o "\$options" "\$type" "\$dir" || exit 1
    done || exit 1
    mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
    hostname "\$0" && exec "\$@"' "\$node" "\$@"
SH
        chmod +x "$on_node"
        HETPU_SLURM_INSIDE=1 SLURM_CLUSTER_NODES="$entries" SLURM_CLUSTER_EXEC="$on_node" \
            "$on_node" node0 bash "$0" "$top" "$build" "${tests[@]}"
        exit $?  # the EXIT trap takes the namespaces down
    fi
    echo "slurm-check: cannot create network namespaces here: one node instead of $nodes" >&2
fi

# shellcheck source=tests/slurm/cluster.sh
. "$here/cluster.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-slurm.XXXXXX")
trap 'rm -rf "$work"' EXIT  # until slurm_cluster_start puts slurm_cluster_stop in its place

# The site's partitions: this node, as a CPU partition and as a GPU partition (2 GPUs of
# 150 W beside one 100 W CPU socket: weight 3 C SU per node-hour, Eq. 15). Slurm's billing
# weights are the ones `hetpu su rate` prints for them.
read -r node_cpus node_mem_mb < <(slurmd -C | sed -n 's/.* CPUs=\([0-9]*\) .* RealMemory=\([0-9]*\).*/\1 \2/p')
[ "${node_cpus:-0}" -ge 2 ] || { echo "slurm-check needs at least 2 CPUs (slurmd -C: ${node_cpus:-none})" >&2; exit 1; }
site=$work/site.toml
mem_gib=$(python3 -c "print(repr($node_mem_mb / 1024))")
cat >"$site" <<EOF
[partition.cpu]
cores_per_node = $node_cpus
mem_gib_per_node = $mem_gib
cpu_tdp_w = 100

[partition.gpu]
cores_per_node = $node_cpus
mem_gib_per_node = $mem_gib
cpu_tdp_w = 100
gpus_per_node = 2
gpu_tdp_w = 150
EOF
weights() { "$build/tools/hetpu" su rate --config "$site" --partition "$1" --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["tres_billing_weights_equivalent"])'; }
cpu_weights=$(weights cpu)
gpu_weights=$(weights gpu)
slurm_say "hetpu su rate: cpu TRESBillingWeights=\"$cpu_weights\", gpu TRESBillingWeights=\"$gpu_weights\""

slurm_cluster_start "$work" "$cpu_weights" "$gpu_weights"
slurm_say "srun --mpi=list: $(srun --mpi=list 2>&1 | tr -s '\n ' ' ')"

# What every job inherits (sbatch, srun and salloc export the environment): the test node
# of the other shell tests (1 CPU worker + 1 PoCL OpenCL worker), hetpu's files in $work.
export HETPU_BUILDDIR=$build HETPU_SLURM_TESTS=$here HETPU_SITE=$site
# How many nodes the cluster has (the tests across nodes need several).
HETPU_SLURM_NODES=$(tr -cd , <<<"$SLURM_NODE_NAMES" | wc -c)
export HETPU_SLURM_NODES=$((HETPU_SLURM_NODES + 1))
export STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_SILENT=1
export POCL_MAX_PTHREAD_COUNT=1 STARPU_WORKERS_NOBIND=1
export STARPU_HOME=$work/starpu HETPU_HOME=$work/hetpu-home HETPU_MGB_ARBITER=off
export HETPU_PARTITION_CONFIG=$site HETPU_ACCOUNTING_QUIET=0
mkdir -p "$STARPU_HOME" "$HETPU_HOME"

failed=()
for t in "${tests[@]}"; do
    export HETPU_TEST_DIR=$work/$t HETPU_LEDGER=$work/$t/ledger.sqlite
    mkdir -p "$HETPU_TEST_DIR"
    t0=$SECONDS
    slurm_say "---- $t"
    if (cd "$HETPU_TEST_DIR" && timeout -k 10 900 bash ${SLURM_CHECK_TRACE:+-x} "$here/$t.sh"); then
        slurm_say "---- $t: ok ($((SECONDS - t0))s)"
    else
        slurm_say "---- $t: FAILED ($((SECONDS - t0))s)"
        failed+=("$t")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    slurm_say "failed: ${failed[*]}"
    exit 1
fi
slurm_say "all passed: ${tests[*]} (wall ${SECONDS}s so far; the daemons stop next)"
