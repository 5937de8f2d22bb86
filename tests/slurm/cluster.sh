# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by tests/slurm/slurm_check.sh (bash): a Slurm cluster of this machine (one node, or
# several in network namespaces),
# run by the test suite under a private state directory. Nothing in /etc is read or
# written: SLURM_CONF names the private slurm.conf (slurmdbd.conf and gres.conf beside it),
# munged has its own key and socket, MariaDB its own data directory and port.
#
#   slurm_cluster_start DIR CPU_WEIGHTS GPU_WEIGHTS   write the configs, start munged,
#       mariadbd, slurmdbd, slurmctld and slurmd in the foreground (children of this shell),
#       wait until the node is idle; partitions `cpu` (default) and `gpu`, each with its
#       TRESBillingWeights; the node has its real cores and memory and 2 fake GPUs (GRES).
#   slurm_cluster_stop   cancel what is left, stop the daemons in reverse order, check that
#       none is left (run by the EXIT trap that slurm_cluster_start installs).
#   slurm_dump_logs      the tail of every daemon's log (on failure).
#
# Every wait is a poll with a generous bound: a loaded machine makes it slower, never wrong.

SLURM_NODE=$(hostname -s)
SLURM_GPUS=2
# Several nodes (slurm_check.sh sets these when it runs inside tests/cluster/netns_cluster.sh's
# namespaces): "NAME:ADDRESS ..." with the controller on the first, and a command that runs
# its arguments inside node NAME's namespace with NAME as hostname (NAME comes first).
SLURM_CLUSTER_NODES=${SLURM_CLUSTER_NODES:-}
SLURM_CLUSTER_EXEC=${SLURM_CLUSTER_EXEC:-}
slurm_pids=()   # "name:pid", in start order
slurm_dir=""

slurm_say() { printf 'slurm-check: %s\n' "$*" >&2; }

# slurm_wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s until it succeeds.
slurm_wait_for() {
    local limit=$1 what=$2 t0=$SECONDS
    shift 2
    until "$@" >/dev/null 2>&1; do
        if [ $((SECONDS - t0)) -ge "$limit" ]; then
            slurm_say "timed out after ${limit}s waiting for $what"
            return 1
        fi
        slurm_check_alive || return 1
        sleep 0.2
    done
}

# Every daemon started so far still runs (a daemon that died is reported with its log).
slurm_check_alive() {
    local e name pid
    for e in "${slurm_pids[@]}"; do
        name=${e%%:*} pid=${e#*:}
        if ! kill -0 "$pid" 2>/dev/null; then
            slurm_say "$name (pid $pid) died"
            slurm_dump_logs
            return 1
        fi
    done
}

# Free TCP ports on 127.0.0.1, chosen by the kernel (so parallel runs and other services
# never collide with fixed numbers).
slurm_free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

slurm_dump_logs() {
    local f
    for f in "$slurm_dir"/log/*; do
        [ -s "$f" ] || continue
        echo "---- $f (last 40 lines)" >&2
        tail -n 40 "$f" >&2
    done
}

slurm_start_daemon() {  # slurm_start_daemon NAME COMMAND...: in the foreground, as a child
    local name=$1
    shift
    "$@" >"$slurm_dir/log/$name.out" 2>&1 &
    slurm_pids+=("$name:$!")
    slurm_say "started $name (pid $!): $*"
}

slurm_cluster_start() {
    local cpu_weights=$2 gpu_weights=$3 t0=$SECONDS
    slurm_dir=$1
    trap slurm_cluster_stop EXIT
    trap 'exit 130' INT TERM
    # munged refuses a socket whose directory others cannot enter (mktemp makes it 0700).
    chmod 755 "$slurm_dir"
    mkdir -p "$slurm_dir/log" "$slurm_dir/spool/ctld" "$slurm_dir/munge" "$slurm_dir/gres"
    mkdir -m 700 "$slurm_dir/key"
    read -r port_ctld port_d port_dbd port_db < <(slurm_free_ports 4)

    # The node as slurmd sees it: real sockets, cores, threads and memory.
    local node_line
    node_line=$(slurmd -C | head -n 1 | sed -e "s/^NodeName=[^ ]*/NodeName=$SLURM_NODE/" -e 's/ UpTime=.*//')
    SLURM_NODE_CPUS=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")
    SLURM_NODE_MEM_MB=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")
    [[ -n "$SLURM_NODE_CPUS" && -n "$SLURM_NODE_MEM_MB" ]] || { slurm_say "cannot read slurmd -C: $node_line"; return 1; }

    # Fake GPUs: GRES needs character devices; two private ones (the numbers of /dev/null
    # and /dev/zero) stand for them. Slurm only names them in the job's environment
    # (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS); nothing opens them.
    mknod "$slurm_dir/gres/gpu0" c 1 3
    mknod "$slurm_dir/gres/gpu1" c 1 5

    # One node line per node: this machine's resources under each name. One node: this
    # machine on 127.0.0.1; several: each at its namespace's address, the controller on the
    # first (where this script runs).
    local nodes=${SLURM_CLUSTER_NODES:-$SLURM_NODE:127.0.0.1} entry ctld_host="" node_lines="" node_names=""
    for entry in $nodes; do
        [ -n "$ctld_host" ] || ctld_host="${entry%%:*}(${entry#*:})"
        node_lines+="${node_line/NodeName=$SLURM_NODE/NodeName=${entry%%:*}} Gres=gpu:$SLURM_GPUS NodeAddr=${entry#*:} State=UNKNOWN"$'\n'
        node_names+="${node_names:+,}${entry%%:*}"
        mkdir -p "$slurm_dir/spool/d-${entry%%:*}"
    done
    SLURM_NODE_NAMES=$node_names

    cat >"$slurm_dir/slurm.conf" <<EOF
# Written by tests/slurm/cluster.sh: a test cluster, run by the test suite.
ClusterName=hetputest
SlurmctldHost=$ctld_host
SlurmctldPort=$port_ctld
SlurmdPort=$port_d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$slurm_dir/munge/munge.sock
CryptoType=crypto/munge
StateSaveLocation=$slurm_dir/spool/ctld
SlurmdSpoolDir=$slurm_dir/spool/d-%n
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd-%n.pid
SlurmctldLogFile=$slurm_dir/log/slurmctld.log
SlurmdLogFile=$slurm_dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups in a container without systemd: processes tracked by their parents, no binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
# A cancelled job's processes get SIGTERM, then SIGKILL after KillWait seconds.
KillWait=5
# The accounting database: GRES (gres/gpu) can only be a billed TRES with slurmdbd.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$port_dbd
AccountingStoragePass=$slurm_dir/munge/munge.sock
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# Billing is the largest weighted TRES, as in the accounting paper's max(fc, fg, fm).
PriorityFlags=MAX_TRES
${node_lines}PartitionName=cpu Nodes=$node_names Default=YES MaxTime=INFINITE State=UP TRESBillingWeights="$cpu_weights"
PartitionName=gpu Nodes=$node_names MaxTime=INFINITE State=UP TRESBillingWeights="$gpu_weights"
EOF
    echo "NodeName=$node_names Name=gpu File=$slurm_dir/gres/gpu[0-1]" >"$slurm_dir/gres.conf"
    : >"$slurm_dir/cgroup.conf"
    (umask 077 && cat >"$slurm_dir/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$slurm_dir/munge/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$port_dbd
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$port_db
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=$slurm_dir/slurmdbd.pid
LogFile=$slurm_dir/log/slurmdbd.log
DebugLevel=info
EOF
    )
    export SLURM_CONF=$slurm_dir/slurm.conf
    slurm_say "slurm.conf: $SLURM_CONF (nodes $node_names, each $SLURM_NODE_CPUS CPUs, $SLURM_NODE_MEM_MB MB, $SLURM_GPUS fake GPUs)"

    mungekey -c -b 1024 -k "$slurm_dir/key/munge.key" >/dev/null 2>&1 || { slurm_say "mungekey failed"; return 1; }
    slurm_start_daemon munged munged -F --key-file="$slurm_dir/key/munge.key" --socket="$slurm_dir/munge/munge.sock" \
        --pid-file="$slurm_dir/munge/munged.pid" --log-file="$slurm_dir/log/munged.log" --seed-file="$slurm_dir/munge/seed"
    slurm_wait_for 60 "munged's socket" sh -c "munge -S '$slurm_dir/munge/munge.sock' -n | unmunge -S '$slurm_dir/munge/munge.sock'" || return 1

    mariadb-install-db --no-defaults --datadir="$slurm_dir/db" --user=root --auth-root-authentication-method=normal \
        --skip-test-db >"$slurm_dir/log/mariadb-install-db.out" 2>&1 || { slurm_dump_logs; return 1; }
    slurm_start_daemon mariadbd mariadbd --no-defaults --datadir="$slurm_dir/db" --user=root --bind-address=127.0.0.1 \
        --port="$port_db" --socket="$slurm_dir/db/mysqld.sock" --pid-file="$slurm_dir/db/mysqld.pid" \
        --log-error="$slurm_dir/log/mariadbd.log" --skip-name-resolve --innodb-buffer-pool-size=64M
    slurm_wait_for 120 "mariadbd" mariadb --no-defaults -h 127.0.0.1 -P "$port_db" -u root -e "SELECT 1" || return 1

    slurm_start_daemon slurmdbd slurmdbd -D
    slurm_wait_for 120 "slurmdbd" sacctmgr -n list cluster || return 1
    slurm_start_daemon slurmctld slurmctld -D -i -f "$SLURM_CONF"
    slurm_wait_for 120 "slurmctld" scontrol ping || return 1
    for entry in $nodes; do
        # shellcheck disable=SC2086  # SLURM_CLUSTER_EXEC is a command and its arguments
        slurm_start_daemon "slurmd-${entry%%:*}" $SLURM_CLUSTER_EXEC ${SLURM_CLUSTER_EXEC:+"${entry%%:*}"} \
            slurmd -D -N "${entry%%:*}" -f "$SLURM_CONF"
    done
    slurm_wait_for 180 "nodes $node_names to be idle" sh -c "[ \"\$(sinfo -h -n '$node_names' -p cpu -o %t | sort -u)\" = idle ]" || return 1
    slurm_say "cluster up in $((SECONDS - t0))s: $(sinfo -h -o '%P %a %D %t %N' | tr '\n' ';')"
}

slurm_cluster_stop() {
    local rc=$? e name pid i t0=$SECONDS left
    trap - EXIT
    [ ${#slurm_pids[@]} -gt 0 ] || return "$rc"
    if [ "$rc" -ne 0 ]; then
        slurm_say "failed (exit status $rc): the daemons' logs follow"
        slurm_dump_logs
    fi
    # Jobs first, so that no slurmstepd outlives slurmd.
    if scontrol ping >/dev/null 2>&1; then
        scancel --full --signal=KILL -u root >/dev/null 2>&1
        scancel -u root >/dev/null 2>&1
        for ((i = 0; i < 300; i++)); do
            [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    # Stop in reverse order of start: SIGTERM, then SIGKILL after 60 s.
    for ((i = ${#slurm_pids[@]} - 1; i >= 0; i--)); do
        e=${slurm_pids[$i]} name=${e%%:*} pid=${e#*:}
        kill -0 "$pid" 2>/dev/null || { slurm_say "$name (pid $pid) had already exited"; continue; }
        kill -TERM "$pid" 2>/dev/null
        for ((t = 0; t < 300; t++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            slurm_say "$name (pid $pid) ignored SIGTERM for 60 s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
        slurm_say "stopped $name (pid $pid)"
    done
    slurm_pids=()
    # Nothing of this cluster may be left: no daemon and no slurmstepd (a step daemon of
    # another Slurm on this machine would be reported too: none should run here).
    left=$(pgrep -a -f "$slurm_dir" || true)
    left+=$(pgrep -a -x slurmstepd || true)
    if [ -n "$left" ]; then
        slurm_say "processes left behind:"
        echo "$left" >&2
        rc=1
    else
        slurm_say "all daemons stopped in $((SECONDS - t0))s; no munged, mariadbd, slurmdbd, slurmctld, slurmd or slurmstepd left"
    fi
    slurm_say "wall time ${SECONDS}s, exit status $rc"
    [ "${SLURM_KEEP_DIR:-0}" = 1 ] || rm -rf "$slurm_dir"
    exit "$rc"
}
