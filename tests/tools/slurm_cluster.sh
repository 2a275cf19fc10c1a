#!/usr/bin/env bash
# A private single-node Slurm cluster for the tests (tests/cpu_slurm.bats):
#
#     slurm_cluster.sh start DIR    munged, slurmctld and slurmd with their
#                                   key, config, sockets, state and logs in DIR;
#                                   prints the line to export (SLURM_CONF=...)
#     slurm_cluster.sh stop DIR     stops the three daemons started in DIR
#
# Debian's slurm-wlm and munge, run as root: a minimal slurm.conf (the
# process tracker and task plugin that need no cgroups, one node with this
# machine's CPUs, free ports), and its own munge key and socket, so nothing
# of the machine's own Slurm or munge (if any) is used or touched.
set -u
action=${1:-}
dir=${2:-}
if [ -z "$action" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 2
fi

# stop: each daemon, and waits (10 s at most) until it has gone, so that
# the folder can be removed.
stop() {
    local pidfile pid _
    for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
        [ -s "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    done
    return 0
}

# free_port: a TCP port nothing listens on now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for WHAT COMMAND...: up to 30 s for COMMAND to succeed.
wait_for() {
    local what=$1 _
    shift
    for _ in $(seq 60); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    echo "slurm_cluster.sh: $what did not come up; its log is in $dir" >&2
    stop
    exit 1
}

case $action in
stop) stop; exit 0 ;;
start) ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

mkdir -p "$dir/spool" "$dir/state"
chmod 700 "$dir"
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" ||
    { echo "slurm_cluster.sh: munged did not start (see $dir/munged.log)" >&2; exit 1; }

host=$(hostname -s)
cat >"$dir/slurm.conf" <<EOF
ClusterName=streamlabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=streamlab1 NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=grading Nodes=streamlab1 Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i || { echo "slurm_cluster.sh: slurmctld did not start (see $dir/slurmctld.log)" >&2; stop; exit 1; }
wait_for slurmctld scontrol ping
slurmd -N streamlab1 || { echo "slurm_cluster.sh: slurmd did not start (see $dir/slurmd.log)" >&2; stop; exit 1; }
wait_for "the node" sh -c 'sinfo -h -o %t | grep -qx idle'
echo "SLURM_CONF=$dir/slurm.conf"
