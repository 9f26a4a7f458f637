#!/usr/bin/env bash
# install_wireup.sh: the install step. Puts spank_wireup.so, wireup-launch, the
# trainer and their files on this node, registers the plugin in plugstack.conf,
# makes running daemons read it, and proves that srun loads it; if anything
# fails, every file goes back to how it was.
#
#   install_wireup.sh [--root DIR] [--dry-run] [--role controller|login|compute]
#                     [--args 'default=off efa=auto']
#                     [--deb FILE | --from-prefix DIR | --build-dir DIR | --source DIR]
#
# on_create.sh runs it with the role and the arguments from the HyperPod
# configs. A second run changes no file and touches no daemon. Settings:
# docs/lifecycle.md (WIREUP_ROOT, WIREUP_PLUGIN_DIR, WIREUP_SLURM_CONF, ...).
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
      --root | --role | --args | --deb | --from-prefix | --build-dir | --source)
        (($# >= 2)) || die "$1 needs a value"
        case $1 in
          --root) WIREUP_ROOT=$2 ;;
          --role) WIREUP_NODE_ROLE=$2 ;;
          --args) WIREUP_PLUGSTACK_ARGS=$2 ;;
          --deb) WIREUP_FROM_DEB=$(realpath -- "$2") ;;
          --from-prefix) WIREUP_FROM_PREFIX=$(realpath -- "$2") ;;
          --build-dir) WIREUP_FROM_BUILD=$(realpath -- "$2") ;;
          --source) WIREUP_FROM_SOURCE=$(realpath -- "$2") ;;
        esac
        shift
        ;;
      *) usage 2 >&2 ;;
    esac
    shift
  done
  export WIREUP_ROOT WIREUP_DRY_RUN WIREUP_NODE_ROLE WIREUP_FROM_DEB WIREUP_FROM_PREFIX \
    WIREUP_FROM_BUILD WIREUP_FROM_SOURCE
}

# The admin arguments must be ones the staged plugin accepts: wireup-env (its
# dry run) parses them with the plugin's own parser, given a one-task step.
validate_args() {
  local tool=$TREE/bin/wireup-env err
  if [[ ! -x $tool ]]; then
    log "no wireup-env among the files; plugstack arguments are not checked before use"
    return 0
  fi
  if ! err=$(env -i PATH=/usr/bin:/bin SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_PROCID=0 \
    SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_STEP_NUM_TASKS=1 SLURM_STEP_NUM_NODES=1 \
    SLURM_STEP_TASKS_PER_NODE=1 SLURM_STEP_NODELIST=ip-10-0-0-1 \
    "$tool" --admin "${ARGV[@]}" 2>&1 >/dev/null); then
    die "plugstack arguments '$ARGS' rejected: ${err#wireup-env: }"
  fi
}

# The lines of srun's output that explain a failure.
srun_said() { { grep -i -m 3 error <<<"$1" || tail -n 3 <<<"$1"; } | tr '\n' ' '; }

# Before anything changes: srun on this node must load the new plugin. A
# scratch slurm.conf names a plugstack.conf that loads it as `required`, so a
# plugin built for another Slurm version makes srun fail here, not on jobs.
preflight() {
  local dir=$SCRATCH/preflight out
  mkdir -p "$dir"
  printf 'ClusterName=wireup-preflight\nSlurmctldHost=localhost\nPlugStackConfig=%s\n' \
    "$dir/plugstack.conf" >"$dir/slurm.conf"
  printf 'required %s %s\n' "$PLUGIN_SRC" "$ARGS" >"$dir/plugstack.conf"
  out=$(daemon srun-help "$dir/slurm.conf" 2>&1) || true
  [[ $out == *--wireup* ]] ||
    die "srun on this node cannot load the new $PLUGIN_NAME (built against other Slurm headers?); nothing was changed. srun said: $(srun_said "$out")"
  log "preflight: this node's srun loads the new $PLUGIN_NAME"
}

# The package brings no dependencies along (nothing is fetched at create
# time): name each shared library a program lacks here, without failing,
# since a node may never run that program (the trainer on the controller).
check_libraries() {
  local f missing
  while IFS= read -r -d '' f; do
    missing=$(ldd "$f" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ') || true
    [[ -z $missing ]] || log "warning: ${f#"$TREE"/} needs ${missing% }, not found on this node (install it with apt-get)"
  done < <(find "$TREE" -type f -perm -u+x -print0)
}

# Every staged file goes to INSTALL_PREFIX/<same path>, the plugin to
# PLUGIN_PATH; files an earlier install left that this one lacks are removed.
install_files() {
  local rel target old
  local -A want=()
  while IFS= read -r -d '' rel; do
    rel=${rel#./}
    if [[ $TREE/$rel == "$PLUGIN_SRC" ]]; then target=$PLUGIN_PATH; else target=$INSTALL_PREFIX/$rel; fi
    if [[ -L $TREE/$rel ]]; then
      put_link "$(readlink -- "$TREE/$rel")" "$target"
    else
      put_file "$TREE/$rel" "$target" "$(stat -c %a -- "$TREE/$rel")"
    fi
    want[$target]=1
  done < <(cd "$TREE" && find . \( -type f -o -type l \) -print0 | sort -z)
  if [[ -f $(node_path "$MANIFEST") ]]; then
    while IFS= read -r old; do
      [[ -n $old && -z ${want[$old]:-} ]] || continue
      remove_file "$old"
      prune_dirs "$(dirname "$old")" "$INSTALL_PREFIX"
    done <"$(node_path "$MANIFEST")"
  fi
  printf '%s\n' "${!want[@]}" | sort >"$SCRATCH/manifest"
  put_file "$SCRATCH/manifest" "$MANIFEST" 644
}

# The managed block for this node's plugstack.conf, worked out before anything
# changes (PS_TARGET, PS_NEW). Nodes without a local slurm.conf are
# configless: they get plugstack.conf from slurmctld.
plan_registration() {
  REGISTERED=0
  if [[ ! -f $(node_path "$SLURM_CONF_PATH") ]]; then
    [[ $ROLE != controller ]] ||
      die "$SLURM_CONF_PATH not found on the controller; set WIREUP_SLURM_CONF (or WIREUP_SLURM_PREFIX)"
    log "no $SLURM_CONF_PATH here: a configless node; its plugstack.conf comes from slurmctld"
    return 0
  fi
  PS_TARGET=$(plugstack_path)
  [[ $PS_TARGET == "$(dirname "$SLURM_CONF_PATH")/plugstack.conf" ]] ||
    log "warning: PlugStackConfig=$PS_TARGET is not plugstack.conf beside slurm.conf; configless nodes will not receive it"
  check_includes "$PS_TARGET"
  PS_TARGET=$(resolve_link "$PS_TARGET")
  PS_NEW=$SCRATCH/plugstack.conf
  render_plugstack "$(node_path "$PS_TARGET")" "optional $PLUGIN_PATH $ARGS" "$PS_NEW"
  REGISTERED=1
}

register() {
  local cur mode=644
  ((REGISTERED)) || return 0
  cur=$(node_path "$PS_TARGET")
  if [[ -f $cur ]]; then
    cmp -s "$cur" "$PS_NEW" && return 0
    mode=$(stat -c %a -- "$cur")
    # The last plugstack.conf before wireup changed it, for the admin.
    put_file "$cur" "$STATE_DIR/plugstack.conf.previous" 644
  fi
  if dry; then
    log "would change $PS_TARGET:"
    diff -u --label "$PS_TARGET" --label "$PS_TARGET (new)" "$cur" "$PS_NEW" 2>/dev/null | sed 's/^/    /' || true
  fi
  put_file "$PS_NEW" "$PS_TARGET" "$mode"
  PLUGSTACK_CHANGED=1
}

# After the daemons reloaded: srun reads the node's real config and must offer --wireup.
verify() {
  local out
  ((REGISTERED)) || return 0
  if dry; then
    log "would check that srun --help lists --wireup with $SLURM_CONF_PATH"
    return 0
  fi
  out=$(daemon srun-help "$(node_path "$SLURM_CONF_PATH")" 2>&1) || true
  [[ $out == *--wireup* ]] ||
    die "srun --help with $SLURM_CONF_PATH does not list --wireup after registration; rolling back. srun said: $(srun_said "$out")"
  log "verified: srun --help lists --wireup"
  check_order "$PS_TARGET"
}

main() {
  parse_args "$@"
  lc_settings
  ROLE=${WIREUP_NODE_ROLE:-}
  [[ $ROLE =~ ^(controller|login|compute)$ ]] || die "--role (or WIREUP_NODE_ROLE) must be controller, login or compute (got '$ROLE')"
  ARGS=${WIREUP_PLUGSTACK_ARGS:-default=off efa=auto}
  read -r -a ARGV <<<"$ARGS"
  ARGS="${ARGV[*]}"
  dry && log "dry run: printing what would change, changing nothing"

  SCRATCH=$(mktemp -d)
  trap undo_on_failure EXIT
  recover_crashed_run
  TREE=$SCRATCH/tree
  "$LC_DIR/stage_wireup.sh" "$TREE" || die "could not get the wireup files to install"
  PLUGIN_SRC=$(find "$TREE" -name "$PLUGIN_NAME" -print -quit)
  validate_args
  preflight
  check_libraries
  plan_registration

  IN_TXN=1
  install_files
  register
  # A run that stopped before its reload left the marker: reload everything.
  [[ -f $(node_path "$PENDING") ]] && PLUGSTACK_CHANGED=$REGISTERED
  if ((CHANGES)) || [[ -f $(node_path "$PENDING") ]]; then
    dry || touch "$(node_path "$PENDING")"
    reload_daemons
  fi
  verify
  IN_TXN=0
  if ! dry; then
    commit
    rm -f -- "$(node_path "$PENDING")"
  fi
  if ((CHANGES == 0)); then
    log "wireup is up to date on this $ROLE node; nothing changed"
  elif dry; then
    log "dry run: $CHANGES change(s) would be made"
  else
    log "wireup installed on this $ROLE node ($CHANGES change(s)); plugin line: optional $PLUGIN_PATH $ARGS"
  fi
}

main "$@"
