#!/usr/bin/env bash
# uninstall_wireup.sh: takes wireup off this node: the plugin's lines in
# plugstack.conf, the files install_wireup.sh put in place (its manifest) and
# its state directory; then the daemons reload as after an install. On a
# cluster, run it on the controller first: configless nodes keep loading the
# plugin until slurmctld ships them the plugstack.conf without it.
#
#   uninstall_wireup.sh [--root DIR] [--dry-run] [--role controller|login|compute]
#
# Idempotent: on a node without wireup it changes nothing.
# shellcheck disable=SC2034 # IN_TXN, PLUGSTACK_CHANGED, WIREUP_* are read by lib/common.sh
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=lib/plugstack.sh
source "$LC_LIB/plugstack.sh"

parse_args() {
  while (($#)); do
    case $1 in
      --dry-run) WIREUP_DRY_RUN=1 ;;
      -h | --help) usage 0 ;;
      --root | --role)
        (($# >= 2)) || die "$1 needs a value"
        if [[ $1 == --root ]]; then WIREUP_ROOT=$2; else WIREUP_NODE_ROLE=$2; fi
        shift
        ;;
      *) usage 2 >&2 ;;
    esac
    shift
  done
}

unregister() {
  local ps cur
  REGISTERED=0
  [[ -f $(node_path "$SLURM_CONF_PATH") ]] || return 0
  ps=$(resolve_link "$(plugstack_path)")
  cur=$(node_path "$ps")
  [[ -f $cur ]] || return 0
  REGISTERED=1
  render_plugstack "$cur" "" "$SCRATCH/plugstack.conf"
  cmp -s "$cur" "$SCRATCH/plugstack.conf" && return 0
  if dry; then
    log "would change $ps:"
    diff -u --label "$ps" --label "$ps (new)" "$cur" "$SCRATCH/plugstack.conf" | sed 's/^/    /' || true
  fi
  put_file "$SCRATCH/plugstack.conf" "$ps" "$(stat -c %a -- "$cur")"
  PLUGSTACK_CHANGED=1
}

remove_files() {
  local f
  if [[ -f $(node_path "$MANIFEST") ]]; then
    while IFS= read -r f; do
      [[ -n $f ]] || continue
      remove_file "$f"
      prune_dirs "$(dirname "$f")" "$INSTALL_PREFIX"
    done <"$(node_path "$MANIFEST")"
  fi
  remove_file "$MANIFEST"
  remove_file "$STATE_DIR/plugstack.conf.previous"
}

main() {
  local out
  parse_args "$@"
  lc_settings
  ROLE=${WIREUP_NODE_ROLE:-}
  [[ $ROLE =~ ^(controller|login|compute)$ ]] || die "--role (or WIREUP_NODE_ROLE) must be controller, login or compute (got '$ROLE')"
  dry && log "dry run: printing what would change, changing nothing"
  SCRATCH=$(mktemp -d)
  trap undo_on_failure EXIT
  recover_crashed_run

  IN_TXN=1
  unregister
  remove_files
  if ((CHANGES)) || [[ -f $(node_path "$PENDING") ]]; then
    reload_daemons
  fi
  if ((REGISTERED)) && ! dry; then
    out=$(daemon srun-help "$(node_path "$SLURM_CONF_PATH")" 2>&1) || true
    [[ $out != *--wireup* ]] ||
      die "srun --help still lists --wireup after unregistering; is $PLUGIN_NAME registered in another file?"
  fi
  IN_TXN=0
  if ! dry; then
    commit
    rm -f -- "$(node_path "$PENDING")"
    rmdir -- "$(node_path "$STATE_DIR")" 2>/dev/null || true
  fi
  if ((CHANGES == 0)); then
    log "wireup is not installed on this $ROLE node; nothing changed"
  elif dry; then
    log "dry run: $CHANGES change(s) would be made"
  else
    log "wireup removed from this $ROLE node ($CHANGES change(s))"
  fi
}

main "$@"
