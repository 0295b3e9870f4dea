#!/usr/bin/env bash
# A real single-node Slurm cluster on this host, for the fleet tests (tests/test_fleet_slurm.py) and CI.
#
#   bash scripts/slurm_local.sh          # start (idempotent: a running, answering cluster is left as it is)
#   bash scripts/slurm_local.sh stop     # stop the daemons this script started
#   export SLURM_CONF=/tmp/gpuperf-slurm/etc/slurm.conf   # what every Slurm command then needs
#
# Debian's munge, slurmctld and slurmd (apt: slurm-wlm munge), run as root; everything they write lies
# under $GPUPERF_SLURM_DIR (default /tmp/gpuperf-slurm) and nothing under /etc is changed, so the host's
# own Slurm configuration (if any) is untouched. One node, this host under its real name, one partition
# "gpuperf". select/linear gives every job the whole node: jobs run one after another, so the PoCL timings
# of one job are not contended by another's. No accounting (no slurmdbd): jobs are followed with squeue
# and scontrol. Prints the SLURM_CONF line to use.
set -euo pipefail
base=${GPUPERF_SLURM_DIR:-/tmp/gpuperf-slurm}
conf="$base/etc/slurm.conf"
export SLURM_CONF="$conf"

stop_slurm() {
  local name pid
  for name in slurmd slurmctld; do
    [ -s "$base/run/$name.pid" ] || continue
    pid=$(cat "$base/run/$name.pid")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

if [ "${1:-start}" = stop ]; then
  stop_slurm
  # munged only when this script started it
  if [ -s "$base/run/munged.pid" ]; then kill "$(cat "$base/run/munged.pid")" 2>/dev/null || true; rm -f "$base/run/munged.pid"; fi
  exit 0
fi
for cmd in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || {
    echo "slurm_local: $cmd not found: apt-get install slurm-wlm munge" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "slurm_local: run as root (slurmd runs jobs as their users)" >&2; exit 3; }
PATH=$PATH:/usr/sbin
# one start at a time: test processes run side by side (pytest-xdist workers) each make sure the cluster is up
mkdir -p "$base"
exec 9>"$base/.start.lock"
flock 9

host=$(hostname -s)
# the name is the host's own; where it does not resolve (a bare container), the daemons meet on loopback
addr=""
getent hosts "$host" >/dev/null 2>&1 || addr=127.0.0.1
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
mkdir -p "$base"/{etc,run,log,ctld,spool} /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true

# munge: the key the package made (or a new one), the daemon as its own user
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
fi
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid 9>&-
  cp /run/munge/munged.pid "$base/run/munged.pid" 2>/dev/null || true
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

cat > "$conf.new" <<EOF
# written by scripts/slurm_local.sh: a single-node cluster for pytest-gpuperf's fleet tests
ClusterName=gpuperf
SlurmctldHost=$host${addr:+($addr)}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$base/ctld
SlurmdSpoolDir=$base/spool
SlurmctldPidFile=$base/run/slurmctld.pid
SlurmdPidFile=$base/run/slurmd.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
MpiDefault=none
KillWait=30
MinJobAge=3600
InactiveLimit=0
Waittime=0
NodeName=$host${addr:+ NodeAddr=$addr} CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=gpuperf Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
if [ -f "$conf" ] && cmp -s "$conf" "$conf.new"; then rm "$conf.new"; else mv "$conf.new" "$conf"; changed=1; fi

running() { [ -s "$base/run/$1.pid" ] && kill -0 "$(cat "$base/run/$1.pid")" 2>/dev/null; }
if [ -n "${changed:-}" ]; then stop_slurm; fi
running slurmctld || slurmctld -f "$conf" 9>&-  # the daemons keep no hold of the start lock
running slurmd || slurmd -f "$conf" 9>&-

state=""
for _ in $(seq 60); do
  state=$(timeout 5 sinfo -h -n "$host" -o %t 2>/dev/null || true)
  case "$state" in idle*|alloc*|mix*) break ;; esac
  sleep 0.5
done
case "$state" in
  idle*|alloc*|mix*) ;;
  down*|drain*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true ;;
  *) echo "slurm_local: node $host not up (state '$state'); see $base/log/" >&2; exit 1 ;;
esac
echo "export SLURM_CONF=$conf"
