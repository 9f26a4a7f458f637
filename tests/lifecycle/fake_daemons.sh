#!/usr/bin/env bash
# Stand-in for the lifecycle's daemon actions on a fake root (see `daemon` in
# lifecycle/lib/common.sh). Records every call in FAKE_DAEMON_LOG; `active`
# answers from FAKE_ACTIVE ("slurmctld slurmd"); FAKE_FAIL=reconfigure|restart
# makes that action fail; srun-help runs the real srun: directly for a config
# outside the fake root (the preflight's scratch config), else on a scratch
# copy of the fake node's wireup line with its plugin path moved into
# FAKE_ROOT (FAKE_VERIFY=fail pretends the plugin did not load).
# FAKE_APPEND_PLUGSTACK=LINE: a reload appends LINE to the fake node's
# plugstack.conf (someone else editing it while wireup installs).
set -euo pipefail
: "${FAKE_DAEMON_LOG:?}" "${FAKE_ROOT:?}"
action=$1
shift
echo "$action $*" >>"$FAKE_DAEMON_LOG"
case $action in
  active) [[ " ${FAKE_ACTIVE:-} " == *" $1 "* ]] ;;
  restart | reconfigure)
    [[ -z ${FAKE_APPEND_PLUGSTACK:-} ]] ||
      echo "$FAKE_APPEND_PLUGSTACK" >>"$FAKE_ROOT/opt/slurm/etc/plugstack.conf"
    [[ ${FAKE_FAIL:-} != "$action" ]]
    ;;
  srun-help)
    conf=$1
    if [[ $conf != "$FAKE_ROOT"/* ]]; then
      SLURM_CONF=$conf exec srun --help
    fi
    if [[ ${FAKE_VERIFY:-} == fail ]]; then
      echo "srun: error: (fake) spank: plugin did not load"
      exit 0
    fi
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    ps=$(sed -n 's/^PlugStackConfig=//p' "$conf")
    if [[ -n $ps ]]; then ps=$FAKE_ROOT$ps; else ps=$(dirname "$conf")/plugstack.conf; fi
    grep -E '^(required|optional)[[:space:]]+/[^[:space:]]*spank_wireup\.so' "$ps" |
      sed -E "s#^(required|optional)[[:space:]]+/#\1 $FAKE_ROOT/#" >"$scratch/plugstack.conf" || true
    printf 'ClusterName=fake\nSlurmctldHost=localhost\nPlugStackConfig=%s\n' "$scratch/plugstack.conf" \
      >"$scratch/slurm.conf"
    SLURM_CONF=$scratch/slurm.conf srun --help
    ;;
  *)
    echo "fake_daemons: unknown action $action" >&2
    exit 2
    ;;
esac
