#!/usr/bin/env bash
# The lifecycle's daemon actions (see `daemon` in lifecycle/lib/common.sh),
# done for real on the local test cluster: both daemons count as running,
# `restart slurmd` restarts every emulated node, `reconfigure` is scontrol's.
# Each call is recorded in CLUSTER_DAEMON_LOG.
set -euo pipefail
: "${CLUSTER_DAEMON_LOG:?}" "${WIREUP_TEST_CLUSTER_DIR:?}" "${WIREUP_TEST_CLUSTER_SCRIPT:?}"
action=$1
shift
echo "$action $*" >>"$CLUSTER_DAEMON_LOG"
case $action in
  active) [[ $1 == slurmctld || $1 == slurmd ]] ;;
  restart)
    for node in $(sinfo -h -N -o %N | sort -u); do
      bash "$WIREUP_TEST_CLUSTER_SCRIPT" restart-node "$WIREUP_TEST_CLUSTER_DIR" "$node"
    done
    ;;
  reconfigure) scontrol reconfigure ;;
  srun-help) SLURM_CONF=$1 srun --help ;;
  *)
    echo "cluster_daemons: unknown action $action" >&2
    exit 2
    ;;
esac
