#!/bin/bash
# A small cluster on one machine, to try job scripts before a real one: N nodes, each a network
# namespace with its own host name (n1, n2, ...; a UTS namespace) and address on a private subnet
# (veth links to a bridge in a "switch" namespace), one slurmd per node, slurmctld in a namespace
# of its own ("ctl", the login node too), and munge. Root only (namespaces, Slurm daemons).
#
#   tests/cluster/cluster.sh up                 # 3 nodes; prints how to use it
#   tests/cluster/cluster.sh run ctl sbatch -N 2 --ntasks-per-node=2 -c 1 --gpus-per-node=0 jobs/slurm_multinode.sbatch
#   tests/cluster/cluster.sh run ctl squeue     # any command, on any node (ctl, n1, n2, ...)
#   tests/cluster/cluster.sh lose n2            # node n2 lost: its link down, its processes killed
#   tests/cluster/cluster.sh cut n2 / heal n2   # its link down / up again
#   tests/cluster/cluster.sh revive n2          # a lost node back: link up, slurmd started again
#   tests/cluster/cluster.sh bytes n2           # bytes through n2's link (received + sent)
#   tests/cluster/cluster.sh down               # everything above removed (exit 1 if a namespace stays)
#
# Without Slurm, Open MPI's mpirun reaches the nodes through "agent" (its launch agent, as ssh):
#   tests/cluster/cluster.sh run n1 mpirun --mca plm_rsh_agent "$PWD/tests/cluster/cluster.sh agent" \
#       --host n1:2,n2:2 -n 4 golmpi ...
#
# Settings (environment): GOLMPI_CLUSTER_DIR (/tmp/golmpi-cluster: state, logs, spool),
# GOLMPI_CLUSTER_NODES (3), GOLMPI_CLUSTER_PREFIX (golmpi: namespace names <prefix>-n1, ...),
# GOLMPI_CLUSTER_SUBNET (10.21.0: node i is .i, ctl is .254), GOLMPI_CLUSTER_SLURMD_TIMEOUT (40 s: a node
# silent that long is DOWN; a busy machine delays a slurmd's answers by seconds).
# After "up", the other commands read these from the cluster's directory; only the directory is
# needed again.
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${GOLMPI_CLUSTER_DIR:-/tmp/golmpi-cluster}

say() { echo "cluster: $*" >&2; }
die() {
    echo "cluster: error: $*" >&2
    exit 1
}

load() { # the settings of a cluster that is up
    [[ -f "$DIR/cluster.env" ]] || die "no cluster in $DIR (run '$0 up' first, or set GOLMPI_CLUSTER_DIR)"
    # shellcheck source=/dev/null
    source "$DIR/cluster.env"
}

nodes() { seq -f 'n%g' 1 "$NODES"; }
ns() { echo "$PREFIX-$1"; }

# Runs a command on a node (n1.., ctl): in its network namespace, with its host name, and with the
# cluster's host table as /etc/hosts (in a mount namespace of the command's own, which sees every
# other mount, /sys/fs/cgroup and /dev/shm included, as the machine's). The nodes share this
# machine's cores, and each binds its ranks to the same ones: an MPI wait spins, and a rank
# spinning on the core its peer on another node needs starves it, the more so as Slurm starts each
# node's ranks in a scheduler group of their own (every multi-node job stalled at its first frame
# until the halo watchdog, and the starved slurmds were set DOWN). So Open MPI is told the machine
# is oversubscribed (mpi_yield_when_idle: a waiting rank yields its core), which mpirun cannot see
# here (each node says it has 2 CPUs), unless the caller says otherwise; sbatch passes it on to
# the job. A real cluster's nodes need no such setting. (And "up" turns the kernel's autogroups
# off while a cluster is up: see shared_cores.)
on() {
    local node=$1
    shift
    [[ -e "$DIR/uts/$node" ]] || die "no node '$node' (nodes: ctl $(nodes | tr '\n' ' '))"
    OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1} \
        nsenter --net="/run/netns/$(ns "$node")" --uts="$DIR/uts/$node" -- \
        unshare --mount --propagation slave -- \
        /bin/sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$DIR/hosts" "$@"
}

# Processes inside a node's network namespace: the node's slurmd, its jobs, everything.
kill_node() {
    local node=$1 pids
    pids=$(ip netns pids "$(ns "$node")" 2>/dev/null)
    [[ -z "$pids" ]] || kill -KILL $pids 2>/dev/null
    for _ in $(seq 50); do
        [[ -z "$(ip netns pids "$(ns "$node")" 2>/dev/null)" ]] && return 0
        sleep 0.1
    done
    say "processes left in node $node: $(ip netns pids "$(ns "$node")" | tr '\n' ' ')"
}

# The nodes' processes share this machine's scheduler, and with autogroups on (Debian's default)
# each session is a group that gets an equal share: every node's daemon and the ranks it starts are
# one such group. Open MPI's waiting ranks (sched_yield in a loop) then starved the other groups'
# threads that sleep and wake: a 20 ms ticker in a session of its own went 24 s unwoken while a rank
# held at a chunk's write kept its peers on the other node waiting in a collective (22 ms, for its
# 20 ms sleep, with autogroups off). Starved that way, a rank's heartbeat stopped and its peers
# judged it lost (a resumed job failed so in CI). Real nodes share no scheduler: off while a cluster
# is up, put back as it was when the last cluster on this machine goes down.
SCHED=/run/golmpi-cluster-sched
AUTOGROUP=/proc/sys/kernel/sched_autogroup_enabled
shared_cores() { # on | off: this cluster's claim on the setting
    local me
    me="$SCHED/claim$(realpath -m "$DIR" | tr '/' '_')"
    [[ -w "$AUTOGROUP" ]] || return 0 # a kernel without autogroups
    if [[ $1 == on ]]; then
        mkdir -p "$SCHED"
        [[ -f "$SCHED/before" ]] || cat "$AUTOGROUP" >"$SCHED/before"
        : >"$me"
        echo 0 >"$AUTOGROUP"
        return 0
    fi
    rm -f "$me"
    if [[ -f "$SCHED/before" && -z "$(find "$SCHED" -mindepth 1 -name 'claim*' -print -quit)" ]]; then
        cat "$SCHED/before" >"$AUTOGROUP"
        rm -rf "$SCHED"
    fi
}

cmd_up() {
    NODES=${GOLMPI_CLUSTER_NODES:-3}
    PREFIX=${GOLMPI_CLUSTER_PREFIX:-golmpi}
    SUBNET=${GOLMPI_CLUSTER_SUBNET:-10.21.0}
    SLURMD_TIMEOUT=${GOLMPI_CLUSTER_SLURMD_TIMEOUT:-40}
    [[ "$SLURMD_TIMEOUT" =~ ^[0-9]+$ && "$SLURMD_TIMEOUT" -ge 10 ]] || die "GOLMPI_CLUSTER_SLURMD_TIMEOUT: 10 s or more"
    [[ "$(id -u)" == 0 ]] || die "needs root (network namespaces, Slurm daemons)"
    [[ "$NODES" =~ ^[1-9][0-9]?$ && "$NODES" -le 200 ]] || die "GOLMPI_CLUSTER_NODES: 1 to 200"
    [[ "$PREFIX" =~ ^[a-z][a-z0-9]{0,8}$ ]] || die "GOLMPI_CLUSTER_PREFIX: a-z0-9, 1 to 9 characters"
    [[ ! -e "$DIR/cluster.env" ]] || die "a cluster is up in $DIR already ('$0 down' first)"
    local c
    for c in ip nsenter munged slurmctld slurmd sbatch sinfo; do
        command -v "$c" >/dev/null || die "'$c' not found (Debian: iproute2 util-linux munge slurm-wlm)"
    done
    mkdir -p "$DIR"/{munge,state,spool,uts}
    chmod 755 "$DIR"
    cat >"$DIR/cluster.env" <<EOF
NODES=$NODES
PREFIX=$PREFIX
SUBNET=$SUBNET
EOF
    export SLURM_CONF=$DIR/slurm.conf
    shared_cores on
    make_network || { cmd_down; die "could not make the network namespaces (see above)"; }
    start_daemons || { cmd_down; die "the cluster did not come up (logs were in $DIR)"; }
    say "up: $NODES nodes ($(nodes | tr '\n' ' ')), subnet $SUBNET.0/24, $DIR"
    say "  $0 run ctl sinfo       # or squeue, sbatch ...; SLURM_CONF=$SLURM_CONF"
}

# The switch (a bridge), then one namespace per node with a veth link to it.
make_network() {
    local node addr i=0 hosts="$DIR/hosts"
    ip netns add "$(ns sw)" || return 1
    ip -n "$(ns sw)" link add br0 type bridge || return 1
    ip -n "$(ns sw)" link set br0 up || return 1
    printf '127.0.0.1 localhost\n%s.254 ctl\n' "$SUBNET" >"$hosts"
    for node in $(nodes); do
        i=$((i + 1))
        echo "$SUBNET.$i $node" >>"$hosts"
    done
    i=0
    for node in ctl $(nodes); do
        addr=$SUBNET.254
        [[ $node == ctl ]] || { i=$((i + 1)); addr=$SUBNET.$i; }
        ip netns add "$(ns "$node")" || return 1
        ip link add eth0 netns "$(ns "$node")" type veth peer name "$node" netns "$(ns sw)" || return 1
        ip -n "$(ns sw)" link set "$node" master br0 up || return 1
        ip -n "$(ns "$node")" addr add "$addr/24" dev eth0 || return 1
        ip -n "$(ns "$node")" link set eth0 up || return 1
        ip -n "$(ns "$node")" link set lo up || return 1
        # the node's host name: a UTS namespace kept by a bind mount on a file
        : >"$DIR/uts/$node"
        unshare --uts="$DIR/uts/$node" hostname "$node" || return 1
    done
}

start_daemons() {
    local node list="" nodelines="" i=0 state
    for node in $(nodes); do
        i=$((i + 1))
        nodelines+="NodeName=$node NodeAddr=$SUBNET.$i CPUs=$(nproc) RealMemory=1000 State=UNKNOWN"$'\n'
    done
    list="n[1-$NODES]"
    [[ $NODES == 1 ]] && list=n1
    # the template's @NODES@ line becomes the node lines
    sed -e "s|@DIR@|$DIR|g" -e "s|@USER@|$(id -un)|g" -e "s|@CTL_ADDR@|$SUBNET.254|g" \
        -e "s|@SLURMD_TIMEOUT@|$SLURMD_TIMEOUT|g" -e "s|@MESSAGE_TIMEOUT@|$((SLURMD_TIMEOUT / 2))|g" -e "s|@NODELIST@|$list|g" \
        "$HERE/slurm.conf.in" | awk -v n="$nodelines" '$0 == "@NODES@" { printf "%s", n; next } { print }' \
        >"$SLURM_CONF"
    : >"$DIR/plugstack.conf" # the system's spank plugins are not ours to load
    chmod 700 "$DIR/munge"
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$DIR/munge/munge.key"
    # munged: a file socket, so every namespace reaches it
    on ctl setsid munged --foreground --force --socket="$DIR/munge/munge.socket" \
        --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
        --seed-file="$DIR/munge/munged.seed" --log-file="$DIR/munged.log" \
        >"$DIR/munged.out.log" 2>&1 </dev/null &
    for _ in $(seq 50); do [[ -S "$DIR/munge/munge.socket" ]] && break; sleep 0.1; done
    [[ -S "$DIR/munge/munge.socket" ]] || { say "munged did not start"; return 1; }
    on ctl setsid slurmctld -D -c -f "$SLURM_CONF" >"$DIR/slurmctld.out.log" 2>&1 </dev/null &
    for node in $(nodes); do start_slurmd "$node"; done
    for _ in $(seq 120); do
        state=$(on ctl sinfo -h -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
        [[ "$state" == "idle " ]] && return 0
        sleep 0.5
    done
    say "nodes not idle after 60 s: '$state'"
    tail -n 5 "$DIR"/*.log >&2
    return 1
}

start_slurmd() {
    mkdir -p "$DIR/spool/$1" "$DIR/tmp/$1"
    on "$1" setsid slurmd -D -N "$1" -f "$SLURM_CONF" >>"$DIR/slurmd-$1.out.log" 2>&1 </dev/null &
}

# Everything "up" made, whatever state it is in: processes in the namespaces (the daemons and
# their jobs), the namespaces and links, the host files, the UTS bind mounts, the directory.
cmd_down() {
    [[ -f "$DIR/cluster.env" ]] || { say "no cluster in $DIR"; return 0; }
    # shellcheck source=/dev/null
    source "$DIR/cluster.env"
    local node
    for node in $(nodes) ctl; do kill_node "$node"; done
    for node in ctl $(nodes) sw; do
        ip netns del "$(ns "$node")" 2>/dev/null
        if [[ -e "$DIR/uts/$node" ]]; then umount "$DIR/uts/$node" 2>/dev/null; fi
    done
    rm -rf "$DIR"
    shared_cores off
    # nothing of the cluster may stay: a namespace left would keep its daemons' addresses
    local left
    left=$(ip netns list 2>/dev/null | awk -v p="$PREFIX-" 'index($1, p) == 1 { printf "%s ", $1 }')
    [[ -z "$left" ]] || { say "error: namespaces left: $left"; return 1; }
    say "down"
}

# Open MPI's launch agent (plm_rsh_agent), like ssh: "agent [-o Option=VALUE]... HOST COMMAND
# WORDS", the words one shell command line. This process stays on the launching node, as ssh does.
# When the remote command is killed with its node (lost: link down), ssh would hear nothing until
# its link came back; so does the agent: it waits while the node's link is down, instead of telling
# mpirun at once. As ssh, with "-o ServerAliveInterval=S -o ServerAliveCountMax=N" it gives up
# (exit 255, "Timeout, server not responding") once the node has been unreachable for S*N
# seconds, whether the remote command still runs (a link cut) or not (a node lost); other -o
# options are ssh's and mean nothing here.
cmd_agent() {
    load
    local alive_s=0 alive_n=3 opt
    while [[ "${1:-}" == -o* ]]; do
        if [[ "$1" == -o ]]; then opt=$2; shift 2; else opt=${1#-o}; shift; fi
        case "$opt" in
        ServerAliveInterval=*) alive_s=${opt#*=} ;;
        ServerAliveCountMax=*) alive_n=${opt#*=} ;;
        esac
    done
    local node=$1 rc=0 pid down=0
    shift
    on "$node" /bin/sh -c "$*" &
    pid=$!
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" && rc=0 || rc=$?
            ((rc > 128)) || return "$rc"
        fi
        if ip -n "$(ns sw)" link show "$node" 2>/dev/null | grep -q 'state UP'; then
            down=0
            kill -0 "$pid" 2>/dev/null || return "$rc"
        else
            down=$((down + 1))
            if ((alive_s > 0 && down > alive_s * alive_n)); then
                echo "Timeout, server $node not responding." >&2
                return 255
            fi
        fi
        sleep 1
    done
}

bytes() { # rx + tx bytes of a node's link, counted on the switch's side
    local node=$1 rx tx
    rx=$(ip netns exec "$(ns sw)" cat "/sys/class/net/$node/statistics/rx_bytes") || return 1
    tx=$(ip netns exec "$(ns sw)" cat "/sys/class/net/$node/statistics/tx_bytes") || return 1
    echo $((rx + tx))
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
run)
    load
    [[ $# -ge 3 ]] || die "usage: $0 run NODE COMMAND..."
    shift
    export SLURM_CONF=$DIR/slurm.conf
    on "$@"
    ;;
agent)
    shift
    cmd_agent "$@"
    ;;
lose)
    load
    ip -n "$(ns sw)" link set "$2" down || die "no node '$2'"
    kill_node "$2"
    ;;
cut) load && { ip -n "$(ns sw)" link set "$2" down || die "no node '$2'"; } ;;
heal) load && { ip -n "$(ns sw)" link set "$2" up || die "no node '$2'"; } ;;
bytes) load && bytes "$2" ;;
revive)
    load
    ip -n "$(ns sw)" link set "$2" up || die "no node '$2'"
    export SLURM_CONF=$DIR/slurm.conf
    start_slurmd "$2"
    ;;
*)
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
