# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the cluster tests: a cluster of NODES "nodes" on this one machine. Each node is a
# network namespace with one veth link to a bridge that lives in a switch namespace of its
# own, so every address the cluster uses exists only inside namespaces this script made.
# Each link is shaped in both directions by a tbf qdisc (rate; tbf cannot add delay, and netem
# is not relied on). Everything is removed on exit, failure included, and cluster_leftovers
# says what would remain.
#
#   cluster_up "1gbit 1gbit 1gbit 50mbit"   one node per rate, named node0, node1, ...
#   cluster_exec NODE CMD...                 run CMD inside NODE's namespace
#   cluster_mpirun MPIRUN-ARGS...            mpirun from node0, one orted per node through
#                                            `ip netns exec`, MPI over TCP on the links only
#   cluster_tx_bytes NODE                    bytes NODE has sent on its link so far
#
# Skips (exit 77, saying why) without root, ip, tc, or where namespaces cannot be made.

cluster_skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || cluster_skip "the cluster test makes network namespaces: it needs root"
command -v ip >/dev/null 2>&1 || cluster_skip "no ip command (apt-get install iproute2)"
command -v tc >/dev/null 2>&1 || cluster_skip "no tc command (apt-get install iproute2)"

# Names unique to this run: several cluster tests may run at once under make -j.
cluster_id=$(( $$ % 100000 ))
cluster_prefix="hetpu${cluster_id}"
cluster_subnet="10.231.$(( $$ % 250 + 1 ))"
cluster_switch="${cluster_prefix}-sw"
cluster_nodes=0
cluster_rates=""

cluster_ns() { echo "${cluster_prefix}-n${1#node}"; }
cluster_addr() { echo "${cluster_subnet}.$(( ${1#node} + 1 ))"; }

cluster_down() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${cluster_prefix}-"); do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        ip netns del "$ns" 2>/dev/null
        rm -rf "/etc/netns/$ns"
        rmdir /etc/netns 2>/dev/null
    done
    rm -rf "$cluster_dir"
}

# What this run would leave behind: namespaces, veths in the root namespace, /etc/netns files.
cluster_leftovers() {
    ip netns list 2>/dev/null | awk '{print $1}' | grep "^${cluster_prefix}-"
    ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | grep "^hp${cluster_id}[ns]"
    ls -d /etc/netns/"${cluster_prefix}"-* 2>/dev/null
}

cluster_dir=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-cluster.XXXXXX")
# node_env.sh's private StarPU home (a test sources it first) goes too: this trap replaces its.
case "${STARPU_HOME:-}" in */hetpu-test.*) cluster_test_home=$STARPU_HOME ;; *) cluster_test_home="" ;; esac
trap 'cluster_down; [ -n "$cluster_test_home" ] && rm -rf "$cluster_test_home"' EXIT
trap 'exit 1' INT TERM HUP

cluster_up() {
    ip netns add "$cluster_switch" 2>"$cluster_dir/err" ||
        cluster_skip "cannot create a network namespace here: $(cat "$cluster_dir/err")"
    ip -n "$cluster_switch" link add br0 type bridge || return 1
    ip -n "$cluster_switch" link set br0 up || return 1
    i=0
    hosts=""
    for rate in $1; do
        ns=$(cluster_ns node$i)
        ip netns add "$ns" || return 1
        # The veth is made in the root namespace and its two ends moved away at once, so
        # nothing of the cluster stays in the root namespace.
        ip link add "hp${cluster_id}n$i" type veth peer name "hp${cluster_id}s$i" || return 1
        ip link set "hp${cluster_id}n$i" netns "$ns" name eth0 || return 1
        ip link set "hp${cluster_id}s$i" netns "$cluster_switch" name "port$i" || return 1
        ip -n "$cluster_switch" link set "port$i" master br0 up || return 1
        ip -n "$ns" addr add "$(cluster_addr node$i)/24" dev eth0 || return 1
        ip -n "$ns" link set eth0 up || return 1
        ip -n "$ns" link set lo up || return 1
        # Both directions: what the node sends (its eth0) and what it receives (the
        # switch's port towards it). A burst of a few ms of traffic at the rate.
        tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst 64kb latency 200ms || return 1
        tc -n "$cluster_switch" qdisc add dev "port$i" root tbf rate "$rate" burst 64kb latency 200ms || return 1
        hosts="$hosts$(cluster_addr node$i) node$i
"
        i=$((i + 1))
    done
    cluster_nodes=$i
    cluster_rates=$1
    # ip netns exec bind-mounts /etc/netns/NS/hosts over /etc/hosts inside NS: the node names
    # resolve on every node, and nowhere else.
    for n in $(seq 0 $((cluster_nodes - 1))); do
        mkdir -p "/etc/netns/$(cluster_ns node$n)"
        printf '127.0.0.1 localhost\n%s' "$hosts" >"/etc/netns/$(cluster_ns node$n)/hosts"
    done
    # OpenMPI starts its daemon on each node through this "remote shell".
    cat >"$cluster_dir/netns_rsh" <<SH
#!/bin/sh
# OpenMPI's plm_rsh_agent: run the daemon's command line inside the named node's namespace,
# under the node's own hostname (OpenMPI keys its session files by hostname).
host=\$1
shift
exec ip netns exec "${cluster_prefix}-n\${host#node}" unshare --uts /bin/sh -c 'hostname "\$0" && exec /bin/sh -c "\$*"' "\$host" "\$@"
SH
    chmod +x "$cluster_dir/netns_rsh"
}

# Under the node's own hostname, as its daemons run (netns_rsh).
cluster_exec() {
    node=$1
    shift
    ip netns exec "$(cluster_ns "$node")" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$node" "$@"
}

cluster_tx_bytes() { cluster_exec "$1" cat /sys/class/net/eth0/statistics/tx_bytes; }

# One rank per node unless -np/-H say otherwise; the TCP transport only, on the links only.
cluster_mpirun() {
    hostlist=""
    for n in $(seq 0 $((cluster_nodes - 1))); do hostlist="${hostlist:+$hostlist,}node$n"; done
    cluster_exec node0 timeout -k 10 "${MPI_TIMEOUT:-240}" mpirun --allow-run-as-root -q --bind-to none \
        --mca plm_rsh_agent "$cluster_dir/netns_rsh" --mca plm_rsh_no_tree_spawn 1 \
        --mca btl tcp,self --mca btl_tcp_if_include "${cluster_subnet}.0/24" \
        --mca oob_tcp_if_include "${cluster_subnet}.0/24" -H "$hostlist" "$@"
}
