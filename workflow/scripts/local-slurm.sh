#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, to try the SLURM profile and to test it in CI:
#
#   workflow/scripts/local-slurm.sh start    # write slurm.conf + munge key, start munged, slurmctld, slurmd
#   snakemake results --profile workflow/profiles/slurm --configfile config/smoke.yaml
#   workflow/scripts/local-slurm.sh stop     # stop exactly the daemons start started
#
# Everything lives in LOCAL_SLURM_DIR (default ${TMPDIR:-/tmp}/rnnbench-slurm): config, key, state, logs and
# the pid files `stop` reads. Nothing under /etc is touched: SLURM's commands find the config through
# /run/slurm/conf, the runtime folder a compute node's slurmd fills in "configless" mode, which `start`
# links to this folder and `stop` unlinks (SLURM_CONF alone is not enough: the plugin's job step clears it
# before calling srun). The controller and the compute daemon both run on localhost, as root (slurmd must
# be root to start jobs), with accounting disabled. This script installs nothing: without Debian's
# slurm-wlm and munge it says how to get them and stops.
set -euo pipefail

DIR="${LOCAL_SLURM_DIR:-${TMPDIR:-/tmp}/rnnbench-slurm}"
CTLD_PORT="${LOCAL_SLURM_CTLD_PORT:-6817}"
SLURMD_PORT="${LOCAL_SLURM_SLURMD_PORT:-6818}"
CONF="$DIR/conf/slurm.conf"
# Where SLURM commands look for the config when neither SLURM_CONF nor /etc/slurm/slurm.conf is there.
RUN_CONF=/run/slurm/conf
SOCKET="$DIR/munge/munge.socket"
# Stopped in this order: the compute daemon, then the controller, then the authentication they both use.
DAEMONS=(slurmd slurmctld munged)

die() { echo "local-slurm: $*" >&2; exit 1; }

pid_file() {
  case "$1" in
    munged) echo "$DIR/munge/munged.pid" ;;
    *) echo "$DIR/$1.pid" ;;
  esac
}

# The pid in the daemon's pid file, if that process is alive and is that daemon (a pid can be reused). The pid
# file is looked for in the folder given second, else in this cluster's.
running_pid() {
  local file pid
  file="$(DIR="${2:-$DIR}" pid_file "$1")"
  [ -s "$file" ] || return 1
  pid="$(tr -dc '0-9' < "$file")"
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
  [ "$(cat "/proc/$pid/comm")" = "$1" ] || return 1
  echo "$pid"
}

check_requirements() {
  local missing=()
  for binary in munged slurmctld slurmd sinfo sbatch squeue scontrol; do
    command -v "$binary" > /dev/null || missing+=("$binary")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    die "not found: ${missing[*]}. Install Debian's packages first (nothing is installed by this script):
    sudo apt-get install -y slurm-wlm munge"
  fi
  [ "$(id -u)" -eq 0 ] || die "run as root: slurmd starts each job as the user who submitted it"
  [ ! -e /etc/slurm/slurm.conf ] || die "/etc/slurm/slurm.conf exists: this machine already belongs to a
    cluster, whose config every SLURM command would read instead of this one's"
  local linked daemon pid
  if [ -L "$RUN_CONF" ]; then
    linked="$(readlink "$RUN_CONF")"
    if [ "$linked" != "$DIR/conf" ]; then
      # Another local cluster's link. Its daemons alive: it is in use. Gone (it was killed before its stop,
      # which is what removes the link): the link is stale and would only send SLURM's commands to a config
      # that no daemon reads.
      for daemon in "${DAEMONS[@]}"; do
        if pid="$(running_pid "$daemon" "$(dirname "$linked")")"; then
          die "$RUN_CONF links to another local cluster, $(dirname "$linked"), whose $daemon runs (pid $pid); stop it first:
    LOCAL_SLURM_DIR=$(dirname "$linked") $0 stop"
        fi
      done
      echo "local-slurm: removing $RUN_CONF, a stale link to $linked left by a local cluster whose daemons are gone" >&2
      rm -f "$RUN_CONF"
    fi
  elif [ -e "$RUN_CONF" ]; then
    die "$RUN_CONF exists: a slurmd in configless mode runs here; stop it first"
  fi
}

write_config() {
  local cpus mem_mb
  cpus="$(nproc)"
  # Slightly under the machine's memory: a node declaring more than it has is drained by slurmd.
  mem_mb="$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)"
  mkdir -p "$DIR/conf" "$DIR/munge" "$DIR/state" "$DIR/spool"
  chmod 700 "$DIR" "$DIR/munge"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$DIR/munge/munge.key"
  fi
  cat > "$CONF" <<EOF
# A one-node cluster on localhost, written by workflow/scripts/local-slurm.sh.
ClusterName=rnnbench-local
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$(pid_file slurmctld)
SlurmdPidFile=$(pid_file slurmd)
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
# No cgroups, no accounting daemon: what a container or a CI machine can run.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
# Finished jobs stay visible to squeue for 5 minutes: the status check without accounting relies on it.
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

node_state() {
  SLURM_CONF="$CONF" sinfo --noheader --nodes=localhost --format=%t 2> /dev/null | head -n 1 || true
}

start() {
  check_requirements
  for daemon in "${DAEMONS[@]}"; do
    if pid="$(running_pid "$daemon")"; then
      die "$daemon already running from $DIR (pid $pid); run '$0 stop' first"
    fi
  done
  # A daemon that fails to start leaves none running: those already started are stopped by their pid files.
  trap 'echo "local-slurm: start failed; stopping what it started" >&2; stop' ERR
  write_config
  mkdir -p "$(dirname "$RUN_CONF")"
  ln -sfn "$DIR/conf" "$RUN_CONF"
  munged --force --socket="$SOCKET" --key-file="$DIR/munge/munge.key" \
    --pid-file="$(pid_file munged)" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
  for _ in $(seq 1 50); do [ -S "$SOCKET" ] && break; sleep 0.1; done
  [ -S "$SOCKET" ] || die "munged did not open $SOCKET; see $DIR/munge/munged.log"
  SLURM_CONF="$CONF" slurmctld -f "$CONF"
  SLURM_CONF="$CONF" slurmd -f "$CONF" -N localhost
  local state=""
  for _ in $(seq 1 60); do
    state="$(node_state)"
    case "$state" in
      idle) break ;;
      down* | drain* | unk*) SLURM_CONF="$CONF" scontrol update nodename=localhost state=resume 2> /dev/null || true ;;
    esac
    sleep 1
  done
  if [ "$state" != idle ]; then
    echo "local-slurm: node not idle after 60 s (state '${state:-none}'); logs: $DIR/slurmctld.log $DIR/slurmd.log" >&2
    stop
    exit 1
  fi
  echo "local-slurm: node localhost idle ($(nproc) CPUs); state, logs and config in $DIR"
}

stop() {
  local pid
  for daemon in "${DAEMONS[@]}"; do
    if pid="$(running_pid "$daemon")"; then
      kill -TERM "$pid"
      for _ in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
      if [ -d "/proc/$pid" ]; then
        kill -KILL "$pid"
        echo "local-slurm: $daemon (pid $pid) killed after 10 s"
      else
        echo "local-slurm: $daemon (pid $pid) stopped"
      fi
    fi
    rm -f "$(pid_file "$daemon")"
  done
  if [ -L "$RUN_CONF" ] && [ "$(readlink "$RUN_CONF")" = "$DIR/conf" ]; then
    rm -f "$RUN_CONF"
    rmdir "$(dirname "$RUN_CONF")" 2> /dev/null || true
  fi
}

status() {
  local pid down=0
  for daemon in "${DAEMONS[@]}"; do
    if pid="$(running_pid "$daemon")"; then
      echo "$daemon running (pid $pid)"
    else
      echo "$daemon not running"
      down=1
    fi
  done
  [ "$down" -eq 0 ] && echo "node localhost: $(node_state)"
  return "$down"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status   (state in LOCAL_SLURM_DIR, default ${TMPDIR:-/tmp}/rnnbench-slurm)" >&2; exit 2 ;;
esac
