#!/usr/bin/env bash
# cluster.sh: start/stop a real, local Slurm cluster (munged + slurmctld + N slurmd)
# for integration tests. Everything lives under one directory DIR; nothing in
# /etc, /run or /var is touched. See docs/test-cluster.md.
#
#   cluster.sh start DIR                   fresh cluster, wait until all nodes are idle
#   cluster.sh stop DIR                    cancel jobs, stop daemons by PID, sweep leftovers
#   cluster.sh env DIR                     print `export` lines for clients (eval them)
#   cluster.sh plugstack DIR [LINE...]     atomically rewrite DIR/plugstack.conf
#   cluster.sh restart-node DIR NODENAME   restart one slurmd, wait until it is idle again
#   cluster.sh status DIR                  print daemon PIDs and node states
#
# Knobs: WIREUP_CLUSTER_NODES (2..64, default 4), WIREUP_CLUSTER_PORT (default 26810:
# slurmctld at it, the i-th slurmd at +i), WIREUP_PLUGSTACK_LINE (initial plugstack line),
# WIREUP_CLUSTER_CPUS (CPUs a node offers, 1..256, default 4),
# WIREUP_CLUSTER_NAMING (how nodes are named, default hyperpod):
#   hyperpod  ip-127-0-0-K (K = 2..N+1): the name spells the address, as on HyperPod
#   hosts     node-I (I = 1..N): resolvable only through a private hosts file that the
#             daemons, slurmstepd and the tasks see (a mount namespace per daemon binds
#             DIR/hosts over /etc/hosts; the machine's /etc/hosts is never changed)
#   nodeaddr  gpuII (01..N): known only through slurm.conf's NodeAddr; no lookup resolves it
# The i-th node (i = 1..N) has NodeAddr=127.0.0.(i+1) and NodeHostname=localhost in every
# style. Slurm 23.02 and later get a cgroup.conf with CgroupPlugin=disabled (their slurmd
# initialises a cgroup plugin even with task/none).
# Every daemon gets WIREUP_TEST_CLUSTER=DIR in its environment; slurmstepd inherits it
# from slurmd and tasks inherit it from srun/sbatch (via `env`), which is how `stop`
# finds leftovers without killing anything by name (slurmstepd hides its environ, so it
# is found by the DIR/log file it holds open).

set -u
set -o pipefail
umask 022

readonly PROG=${0##*/}
START_TIMEOUT=30              # seconds until all nodes must be idle (+1 s a node)
readonly CLIENT_TIMEOUT=15    # seconds for one scontrol/sinfo/scancel call

die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }

usage() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2
  exit 2
}

# Canonical absolute path; identical in start/stop/env so the marker matches.
canon() { realpath -m -- "$1"; }

# ---------------------------------------------------------------- settings
load_settings() {
  NODES=${WIREUP_CLUSTER_NODES:-4}
  PORT=${WIREUP_CLUSTER_PORT:-26810}
  NAMING=${WIREUP_CLUSTER_NAMING:-hyperpod}
  CPUS=${WIREUP_CLUSTER_CPUS:-4}
  if ! [[ $CPUS =~ ^[0-9]+$ ]] || ((CPUS < 1 || CPUS > 256)); then
    die "WIREUP_CLUSTER_CPUS must be 1..256 (got '$CPUS')"
  fi
  if ! [[ $NODES =~ ^[0-9]+$ ]] || ((NODES < 2 || NODES > 64)); then
    die "WIREUP_CLUSTER_NODES must be 2..64 (got '$NODES')"
  fi
  [[ $NAMING =~ ^(hyperpod|hosts|nodeaddr)$ ]] ||
    die "WIREUP_CLUSTER_NAMING must be hyperpod, hosts or nodeaddr (got '$NAMING')"
  START_TIMEOUT=$((30 + NODES))
  if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT + NODES > 65535)); then
    die "WIREUP_CLUSTER_PORT must be a port number >= 1024 (got '$PORT')"
  fi
  local lo hi
  if read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null &&
    ((PORT <= hi && PORT + NODES >= lo)); then
    die "WIREUP_CLUSTER_PORT range $PORT..$((PORT + NODES)) overlaps the ephemeral ports $lo..$hi (an outgoing connection could take a slurmd's port)"
  fi
  if ((PORT <= 6818 && PORT + NODES >= 6817)); then
    die "WIREUP_CLUSTER_PORT range $PORT..$((PORT + NODES)) overlaps Slurm's default ports 6817/6818"
  fi
}

# Node names of an existing cluster, from its slurm.conf (start records them there).
conf_nodes() {
  sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' "$D/slurm.conf" 2>/dev/null
}

# The naming style of an existing cluster, recorded by start.
conf_naming() {
  sed -n 's/^# naming=\([a-z]*\)$/\1/p' "$D/slurm.conf" 2>/dev/null
}

# Name of the i-th node (i = 1..NODES) in style NAMING; its address is node_addr i.
node_name() {
  case $NAMING in
    hyperpod) echo "ip-127-0-0-$(($1 + 1))" ;;
    hosts) echo "node-$1" ;;
    nodeaddr) printf 'gpu%02d\n' "$1" ;;
  esac
}
node_addr() { echo "127.0.0.$(($1 + 1))"; }

node_names() {
  local i
  for ((i = 1; i <= NODES; i++)); do node_name "$i"; done
}

# ---------------------------------------------------------------- processes
# Field N (as numbered in proc(5)) of /proc/PID/stat; the comm field may hold spaces.
field() { awk -v n="$2" '{ sub(/^.*\) /, ""); print $(n - 2) }' "/proc/$1/stat" 2>/dev/null; }

# True when PID is alive, not a zombie, and belongs to this cluster (guards PID reuse):
#  - its environment holds WIREUP_TEST_CLUSTER=DIR (munged, slurmctld, slurmd, tasks), or
#  - it is a Slurm binary holding a file under DIR open. slurmstepd and slurmscriptd
#    overwrite their environ area with their process title ("slurmstepd: [3.batch]"), so
#    /proc/PID/environ of those is blank although getenv() still sees the marker; they
#    keep the node's log file DIR/log/slurmd.NODE.log (slurmctld.log) open, though.
is_ours() {
  local pid=$1 state exe fd
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/stat ]] || return 1
  state=$(field "$pid" 3) || return 1
  [[ $state != Z && $state != X ]] || return 1
  grep -qszxF -- "WIREUP_TEST_CLUSTER=$D" "/proc/$pid/environ" && return 0
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [[ ${exe##*/} == slurm* ]] || return 1
  for fd in /proc/"$pid"/fd/*; do
    [[ $(readlink "$fd" 2>/dev/null) == "$D"/* ]] && return 0
  done
  return 1
}

pidfile() { echo "$D/pids/$1.pid"; }

recorded_pid() {
  local f
  f=$(pidfile "$1")
  [[ -s $f ]] && cat "$f"
}

# Launch a daemon in the foreground of its own session, detached from our stdio,
# and record its PID. $1 = record name, $2 = stdout/stderr file, rest = command.
# Each daemon runs in a mount namespace of its own (unshare; sh execs the daemon, so the
# PID stays its) in which DIR/resolv.conf is bound over /etc/resolv.conf, so nothing in the
# cluster asks the machine's DNS server (Slurm 24.11's slurmd reverse-resolves both ends of
# every connection it accepts; some of those queries went unanswered and each cost the
# resolver's 5 s timeout), and with the hosts naming DIR/hosts over /etc/hosts.
launch() {
  local name=$1 out=$2
  shift 2
  # shellcheck disable=SC2016 # expanded by the inner sh
  setsid unshare --mount --propagation private sh -c '
    if [ -e /etc/resolv.conf ]; then mount --bind "$0/resolv.conf" /etc/resolv.conf || exit 1; fi
    if [ -f "$0/hosts" ]; then mount --bind "$0/hosts" /etc/hosts || exit 1; fi
    exec "$@"' "$D" "$@" </dev/null >"$out" 2>&1 &
  echo $! >"$(pidfile "$name")"
}

# Send TERM to the recorded daemons, wait up to $1 seconds, then KILL the rest.
stop_recorded() {
  local grace=$1 name pid
  shift
  local -a pids=()
  for name in "$@"; do
    pid=$(recorded_pid "$name") || continue
    if is_ours "$pid"; then
      kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    fi
  done
  wait_gone "$grace" "${pids[@]}" || {
    for pid in "${pids[@]}"; do
      is_ours "$pid" && { note "PID $pid did not exit after SIGTERM; sending SIGKILL"; kill -KILL "$pid" 2>/dev/null; }
    done
    wait_gone 5 "${pids[@]}"
  }
  for name in "$@"; do rm -f "$(pidfile "$name")"; done
}

# Wait until none of the PIDs is ours any more; $1 = seconds.
wait_gone() {
  local limit=$1 pid alive i
  shift
  for ((i = 0; i < limit * 10; i++)); do
    alive=0
    for pid in "$@"; do is_ours "$pid" && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  return 1
}

# PIDs of this process and all its ancestors: never sweep the caller's shell.
ancestors() {
  local pid=$BASHPID
  while [[ $pid =~ ^[0-9]+$ ]] && ((pid > 1)); do
    echo "$pid"
    pid=$(field "$pid" 4) || break
  done
}

# Every process of this cluster, except us, our ancestors and the rest of our process
# group: the caller may carry the marker (it evaluated `cluster.sh env`), and so may its
# pipeline peers (`cluster.sh stop | tee log`). slurmstepd, its tasks and the daemons
# each run in a session of their own; the one kind of leftover that can share our group
# is a Slurm client the caller left in the background (srun would wait forever for a
# dead slurmctld), so those go even there.
marked_pids() {
  local skip pid mypgrp exe
  skip=" $(ancestors | tr '\n' ' ') "
  mypgrp=$(field "$BASHPID" 5)
  # Candidates: the marker in the environment, or a Slurm binary (see is_ours).
  for pid in $({
    grep -lszxF -- "WIREUP_TEST_CLUSTER=$D" /proc/[0-9]*/environ
    find /proc -mindepth 2 -maxdepth 2 -name exe -lname '*/slurm*' -printf '%h\n' 2>/dev/null
  } | sed -n 's|^/proc/\([0-9]*\).*|\1|p' | sort -un); do
    [[ $skip == *" $pid "* ]] && continue
    is_ours "$pid" || continue
    if [[ $(field "$pid" 5) == "$mypgrp" ]]; then
      exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
      [[ ${exe##*/} =~ ^(srun|salloc|sattach|sbcast)$ ]] || continue
    fi
    echo "$pid"
  done
}

# Kill leftovers (slurmstepd, tasks, daemons of a half-started cluster) by marker.
sweep() {
  local round pids
  for round in TERM KILL KILL KILL; do
    pids=$(marked_pids | tr '\n' ' ')
    [[ -n ${pids// /} ]] || return 0
    note "sweeping leftover processes (SIG$round): $pids"
    # shellcheck disable=SC2086 # word splitting of the PID list is intended
    kill -"$round" $pids 2>/dev/null
    # shellcheck disable=SC2086
    wait_gone 2 $pids && return 0
  done
  pids=$(marked_pids | tr '\n' ' ')
  [[ -z ${pids// /} ]] || { note "could not remove: $pids"; return 1; }
}

# ---------------------------------------------------------------- clients
client_env() {
  local v
  # A caller inside some other allocation must not leak its job into our cluster.
  while IFS= read -r v; do
    [[ $v == SLURM_CONF ]] || unset "$v"
  done < <(compgen -e | grep '^SLURM_')
  export SLURM_CONF="$D/slurm.conf"
}

ctl_up() {
  timeout "$CLIENT_TIMEOUT" scontrol ping 2>/dev/null | grep -q 'is UP'
}

# "name state" per node, compact states (idle, alloc, down*, drain, ...).
node_states() {
  timeout "$CLIENT_TIMEOUT" sinfo -h -N -o '%N %t' 2>/dev/null | sort -u
}

# Tails of the daemon logs (only slurmctld's and NODE's when a NODE is given).
print_logs() {
  local only=${1:-} f
  # *.stdout repeats *.log for slurm daemons run with -D, but also holds errors that
  # happen before the log file is open; show a little of it.
  for f in "$D"/log/*.log "$D"/log/*.stdout; do
    [[ -s $f ]] || continue
    [[ -z $only || $f == */slurmctld.log || $f == */slurmd."$only".* ]] || continue
    echo "----- tail of $f -----" >&2
    if [[ $f == *.log ]]; then tail -n 25 "$f" >&2; else tail -n 6 "$f" >&2; fi
  done
  echo "----- node states -----" >&2
  node_states >&2 || true
}

# Wait until every node in "$@" is idle. Fails early when a slurmd we started dies.
wait_idle() {
  local limit=$1 i n st ok
  shift
  local -a want=("$@")
  for ((i = 0; i < limit * 5; i++)); do
    st=$(node_states) || st=""
    ok=1
    for n in "${want[@]}"; do
      grep -qx "$n idle" <<<"$st" || { ok=0; break; }
    done
    ((ok)) && return 0
    for n in "${want[@]}"; do
      is_ours "$(recorded_pid "slurmd.$n")" || { note "slurmd for $n is not running"; return 1; }
    done
    is_ours "$(recorded_pid slurmctld)" || { note "slurmctld is not running"; return 1; }
    sleep 0.2
  done
  note "nodes not idle after ${limit}s:"
  echo "$st" >&2
  return 1
}

port_busy() {
  local p=$1
  if command -v ss >/dev/null 2>&1; then
    [[ -n $(ss -Htln "sport = :$p" 2>/dev/null) ]]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null
  fi
}

# ---------------------------------------------------------------- config
write_plugstack() {
  local tmp
  tmp=$(mktemp "$D/.plugstack.XXXXXX") || die "cannot create a temp file in $D"
  if (($# > 0)); then printf '%s\n' "$@" >"$tmp"; else : >"$tmp"; fi
  chmod 644 "$tmp"
  mv -f -- "$tmp" "$D/plugstack.conf" || { rm -f "$tmp"; die "cannot replace $D/plugstack.conf"; }
}

# Slurm's major.minor as one number (22.05 -> 2205), from slurmd -V.
slurm_version() {
  slurmd -V 2>/dev/null | sed -n 's/^slurm[^0-9]*\([0-9]*\)\.\([0-9]*\).*/\1\2/p' | head -n 1
}

write_slurm_conf() {
  local i
  {
    cat <<EOF
# Generated by $PROG for the wireup test cluster; rewritten by every start.
# naming=$NAMING
ClusterName=wireuptest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/slurmd.%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$D/tmp/%n
PlugStackConfig=$D/plugstack.conf
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
PropagateResourceLimits=NONE
MailProg=/bin/true
ReturnToService=2
KillWait=2
MessageTimeout=10
InactiveLimit=0
MinJobAge=5
Waittime=0
OverTimeLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
UnkillableStepTimeout=30
EOF
    for ((i = 1; i <= NODES; i++)); do
      echo "NodeName=$(node_name "$i") NodeAddr=$(node_addr "$i") NodeHostname=localhost Port=$((PORT + i)) CPUs=$CPUS RealMemory=1000 State=UNKNOWN"
    done
    echo "PartitionName=cpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$D/slurm.conf"
  local v
  v=$(slurm_version)
  if [[ -n $v ]] && ((10#$v >= 2302)); then
    echo "CgroupPlugin=disabled" >"$D/cgroup.conf"
  fi
  printf '%s\n' "# $PROG: the test cluster asks no DNS server (see launch)" \
    "nameserver 127.0.0.1" "options timeout:1 attempts:1" >"$D/resolv.conf"
  if [[ $NAMING == hosts ]]; then
    {
      cat /etc/hosts
      echo "# $PROG: the test cluster's node names"
      for ((i = 1; i <= NODES; i++)); do echo "$(node_addr "$i") $(node_name "$i")"; done
    } >"$D/hosts"
  fi
}

# ---------------------------------------------------------------- commands
start_slurmd() {
  local n=$1
  launch "slurmd.$n" "$D/log/slurmd.$n.stdout" slurmd -D -f "$D/slurm.conf" -N "$n"
}

cmd_start() {
  load_settings
  mkdir -p -- "$D" || die "cannot create $D"
  # A cluster still running in DIR (or its leftovers) goes first.
  cmd_stop >/dev/null 2>&1

  local p n t0
  t0=$(date +%s%N)
  for ((p = PORT; p <= PORT + NODES; p++)); do
    port_busy "$p" && die "port $p is already in use (another cluster? set WIREUP_CLUSTER_PORT)"
  done

  # Wipe old state; only our own subpaths, never DIR itself.
  rm -rf -- "$D/state" "$D/spool" "$D/tmp" "$D/run" "$D/pids" "$D/munge" "$D/log" \
    "$D/slurm.conf" "$D/cgroup.conf" "$D/hosts" "$D/resolv.conf" "$D/plugstack.conf" \
    "$D"/.plugstack.* ||
    die "cannot wipe $D"
  mkdir -p "$D/state" "$D/run" "$D/pids" "$D/log" "$D/munge" || die "cannot populate $D"
  chmod 755 "$D" "$D/munge"
  mapfile -t NODE_LIST < <(node_names)
  for n in "${NODE_LIST[@]}"; do
    mkdir -p "$D/spool/slurmd.$n" "$D/tmp/$n" || die "cannot populate $D"
  done
  chmod 1777 "$D/tmp" "$D/tmp"/*

  write_slurm_conf
  if [[ -n ${WIREUP_PLUGSTACK_LINE:-} ]]; then
    write_plugstack "$WIREUP_PLUGSTACK_LINE"
  else
    write_plugstack
  fi

  # Daemon environment: the marker, and no SLURM_* from the caller.
  client_env
  export WIREUP_TEST_CLUSTER="$D"

  mungekey -c -k "$D/munge/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none ||
    fail_start "cannot create a munge key"
  chmod 600 "$D/munge/munge.key"
  # --force: munged refuses a socket below a directory that not everyone may enter
  # (a clone under /root, or mktemp -d's 0700); only root uses this one.
  launch munged "$D/log/munged.stdout" munged -F --force \
    -S "$D/munge/munge.socket" --key-file="$D/munge/munge.key" \
    --log-file="$D/log/munged.log" --pid-file="$D/run/munged.pid" \
    --seed-file="$D/munge/munged.seed" --num-threads=2
  local i
  for ((i = 0; i < 50; i++)); do
    munge -n -S "$D/munge/munge.socket" 2>/dev/null | unmunge -S "$D/munge/munge.socket" >/dev/null 2>&1 && break
    is_ours "$(recorded_pid munged)" || fail_start "munged exited"
    sleep 0.1
  done
  ((i < 50)) || fail_start "munged does not answer on $D/munge/munge.socket"

  launch slurmctld "$D/log/slurmctld.stdout" slurmctld -D -c -f "$D/slurm.conf"
  for ((i = 0; i < START_TIMEOUT * 5; i++)); do
    ctl_up && break
    is_ours "$(recorded_pid slurmctld)" || fail_start "slurmctld exited"
    sleep 0.2
  done
  ((i < START_TIMEOUT * 5)) || fail_start "slurmctld does not answer on port $PORT"

  for n in "${NODE_LIST[@]}"; do start_slurmd "$n"; done
  wait_idle "$START_TIMEOUT" "${NODE_LIST[@]}" || fail_start "cluster did not become idle"

  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%s: cluster up in %d.%03ds: %d nodes named %s (%s..%s; slurmctld port %s, SLURM_CONF=%s)\n' \
    "$PROG" $((ms / 1000)) $((ms % 1000)) "$NODES" "$NAMING" "${NODE_LIST[0]}" "${NODE_LIST[-1]}" \
    "$PORT" "$D/slurm.conf"
}

fail_start() {
  note "start failed: $*"
  print_logs
  cmd_stop >/dev/null 2>&1
  exit 1
}

cmd_stop() {
  [[ -d $D ]] || return 0
  local n
  local -a nodes=()
  mapfile -t nodes < <(conf_nodes)

  # Our marker must not be in the environment of helpers we start while sweeping.
  unset WIREUP_TEST_CLUSTER
  if [[ -f $D/slurm.conf ]]; then
    client_env
    if is_ours "$(recorded_pid slurmctld)"; then
      local jobs i
      jobs=$(timeout "$CLIENT_TIMEOUT" squeue -h -o %A 2>/dev/null | tr '\n' ' ')
      if [[ -n ${jobs// /} ]]; then
        # shellcheck disable=SC2086 # one job id per word
        timeout "$CLIENT_TIMEOUT" scancel $jobs 2>/dev/null
        for ((i = 0; i < 25; i++)); do
          [[ -z $(timeout "$CLIENT_TIMEOUT" squeue -h -o %A 2>/dev/null | tr -d '[:space:]') ]] && break
          sleep 0.2
        done
      fi
    fi
  fi

  local -a names=()
  for n in "${nodes[@]}"; do names+=("slurmd.$n"); done
  # Also any slurmd records that slurm.conf no longer names.
  local f
  for f in "$D"/pids/slurmd.*.pid; do
    [[ -e $f ]] || continue
    n=${f##*/}
    n=${n%.pid}
    [[ " ${names[*]} " == *" $n "* ]] || names+=("$n")
  done
  ((${#names[@]})) && stop_recorded 10 "${names[@]}"
  stop_recorded 10 slurmctld
  stop_recorded 5 munged
  sweep
}

cmd_env() {
  [[ -f $D/slurm.conf ]] || note "warning: $D/slurm.conf does not exist (cluster not started?)"
  local v nodes addrs
  while IFS= read -r v; do
    [[ $v == SLURM_CONF ]] || echo "unset $v"
  done < <(compgen -e | grep '^SLURM_')
  nodes=$(conf_nodes | paste -sd, -)
  addrs=$(sed -n 's/^NodeName=[^ ]* NodeAddr=\([^ ]*\) .*/\1/p' "$D/slurm.conf" 2>/dev/null | paste -sd, -)
  # POSIX-sh single quoting, so that sh and bash can eval the lines.
  q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
  echo "export SLURM_CONF=$(q "$D/slurm.conf")"
  echo "export WIREUP_TEST_CLUSTER=$(q "$D")"
  echo "export WIREUP_TEST_CLUSTER_NODES=$(q "$nodes")"
  echo "export WIREUP_TEST_CLUSTER_ADDRS=$(q "$addrs")"
  echo "export WIREUP_TEST_CLUSTER_NAMING=$(q "$(conf_naming)")"
  echo "export WIREUP_TEST_CLUSTER_PARTITION=cpu"
}

cmd_plugstack() {
  [[ -d $D ]] || die "$D does not exist"
  write_plugstack "$@"
}

cmd_restart_node() {
  local n=${1:-}
  [[ -n $n ]] || usage
  [[ -f $D/slurm.conf ]] || die "$D/slurm.conf does not exist"
  conf_nodes | grep -qxF -- "$n" || die "no node $n in $D/slurm.conf"
  client_env
  export WIREUP_TEST_CLUSTER="$D"
  is_ours "$(recorded_pid slurmctld)" || die "slurmctld of $D is not running"

  local before after i
  before=$(timeout "$CLIENT_TIMEOUT" scontrol show node "$n" 2>/dev/null | grep -o 'SlurmdStartTime=[^ ]*')
  stop_recorded 10 "slurmd.$n"
  # Registration is seen as a new SlurmdStartTime (1 s resolution): never restart
  # within the second the old slurmd started in.
  while [[ $before == "SlurmdStartTime=$(date +%Y-%m-%dT%H:%M:%S)" ]]; do sleep 0.1; done
  start_slurmd "$n"
  for ((i = 0; i < START_TIMEOUT * 5; i++)); do
    after=$(timeout "$CLIENT_TIMEOUT" scontrol show node "$n" 2>/dev/null | grep -o 'SlurmdStartTime=[^ ]*')
    [[ -n $after && $after != "$before" ]] && break
    is_ours "$(recorded_pid "slurmd.$n")" || break
    sleep 0.2
  done
  if [[ -z $after || $after == "$before" ]] || ! wait_idle "$START_TIMEOUT" "$n"; then
    note "restart of $n failed"
    print_logs "$n"
    exit 1
  fi
  note "$n restarted and idle"
}

cmd_status() {
  local name pid f
  for f in "$D"/pids/*.pid; do
    [[ -e $f ]] || continue
    name=${f##*/}
    name=${name%.pid}
    pid=$(cat "$f")
    if is_ours "$pid"; then echo "$name $pid running"; else echo "$name $pid dead"; fi
  done
  if [[ -f $D/slurm.conf ]]; then
    client_env
    node_states
  fi
}

main() {
  (($# >= 2)) || usage
  local cmd=$1
  D=$(canon "$2")
  [[ $D != / ]] || die "refusing to use / as the cluster directory"
  shift 2
  case $cmd in
    start) (($# == 0)) || usage; cmd_start ;;
    stop) (($# == 0)) || usage; cmd_stop; exit 0 ;;
    env) (($# == 0)) || usage; cmd_env ;;
    plugstack) cmd_plugstack "$@" ;;
    restart-node) (($# == 1)) || usage; cmd_restart_node "$1" ;;
    status) cmd_status ;;
    *) usage ;;
  esac
}

main "$@"
