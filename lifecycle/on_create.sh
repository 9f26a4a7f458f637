#!/usr/bin/env bash
# on_create.sh: HyperPod lifecycle entry for wireup. HyperPod runs it as root
# from the downloaded S3 prefix (as OnCreate, or called from the cluster's own
# on_create.sh after Slurm is set up), on creation, node replacement and
# UpdateClusterSoftware, so every run must be safe to repeat.
#
#   on_create.sh [--root DIR] [--dry-run] [--uninstall]
#
# Reads resource_config.json ($SAGEMAKER_RESOURCE_CONFIG_PATH, default
# /opt/ml/config/resource_config.json) and provisioning_parameters.json, finds
# this node's role (controller, login, compute), then runs install_wireup.sh
# (or uninstall_wireup.sh). Logs to /var/log/provision/provisioning.log. Any
# failure ends with a non-zero status and an ERROR line that says why.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

UNINSTALL=0
parse_args() {
  while (($#)); do
    case $1 in
      --dry-run) WIREUP_DRY_RUN=1 ;;
      --uninstall) UNINSTALL=1 ;;
      --root)
        (($# >= 2)) || die "--root needs a value"
        WIREUP_ROOT=$2
        shift
        ;;
      -h | --help) usage 0 ;;
      *) usage 2 >&2 ;;
    esac
    shift
  done
  export WIREUP_ROOT WIREUP_DRY_RUN
}

# A path from the environment: absolute ones are paths on the node (under
# WIREUP_ROOT), relative ones are relative to where HyperPod runs us.
config_file() {
  if [[ $1 == /* ]]; then node_path "$1"; else printf '%s' "$1"; fi
}

# provisioning_parameters.json: uploaded beside the lifecycle scripts (HyperPod
# runs us from that directory, or we sit one level below it), or in /opt/ml/config.
provisioning_parameters() {
  local p
  if [[ -n ${WIREUP_PROVISIONING_PARAMETERS:-} ]]; then
    config_file "$WIREUP_PROVISIONING_PARAMETERS"
    return
  fi
  for p in "$PWD/provisioning_parameters.json" "$LC_DIR/../provisioning_parameters.json" \
    "$(node_path /opt/ml/config/provisioning_parameters.json)"; do
    [[ -f $p ]] && { printf '%s' "$p"; return; }
  done
  die "provisioning_parameters.json not found (looked in $PWD, $(dirname "$LC_DIR") and /opt/ml/config); set WIREUP_PROVISIONING_PARAMETERS"
}

# This node's IPv4 addresses, matched against CustomerIpAddress.
node_ips() {
  if [[ -n ${WIREUP_NODE_IPS:-} ]]; then
    echo "$WIREUP_NODE_IPS"
  elif command -v hostname >/dev/null && hostname -I >/dev/null 2>&1; then
    hostname -I
  else
    ip -4 -o addr show 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4 }' | tr '\n' ' '
  fi
}

main() {
  local rc pp facts step NODE_ROLE NODE_GROUP NODE_INSTANCE CLUSTER_NAME PLUGSTACK_ARGS
  log "wireup lifecycle on $(hostname 2>/dev/null || echo '?') (root $WIREUP_ROOT)$(dry && echo ', dry run')"
  command -v python3 >/dev/null || die "python3 not found; it reads resource_config.json"
  rc=$(config_file "${SAGEMAKER_RESOURCE_CONFIG_PATH:-/opt/ml/config/resource_config.json}")
  pp=$(provisioning_parameters)
  if ! facts=$(python3 "$LC_LIB/hyperpod_config.py" --resource-config "$rc" \
    --provisioning-parameters "$pp" --node-ips "$(node_ips)" 2>&1); then
    die "${facts#error: }"
  fi
  eval "$facts"
  export WIREUP_NODE_ROLE=${WIREUP_NODE_ROLE:-$NODE_ROLE}
  export WIREUP_PLUGSTACK_ARGS=${WIREUP_PLUGSTACK_ARGS:-$PLUGSTACK_ARGS}
  log "node $NODE_INSTANCE of group $NODE_GROUP in cluster ${CLUSTER_NAME:-?}: role $WIREUP_NODE_ROLE"
  if ((UNINSTALL)); then step=uninstall_wireup.sh; else step=install_wireup.sh; fi
  "$LC_DIR/$step" || die "$step failed (see the ERROR above); wireup on this node is as it was before"
  log "wireup lifecycle done"
}

parse_args "$@"
lc_settings
if dry; then
  main
else
  mkdir -p "$(node_path "$LOG_DIR")" || die "cannot create $LOG_DIR"
  main 2>&1 | tee -a "$(node_path "$LOG_DIR")/provisioning.log"
  exit "${PIPESTATUS[0]}"
fi
