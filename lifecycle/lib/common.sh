# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables set here are used by the scripts that source this
# Shared by the wireup lifecycle scripts (sourced, not run).
#
# Paths: every file on the node is named by its path on the node ("target
# path", e.g. /opt/slurm/etc/plugstack.conf) and reached through node_path,
# which puts WIREUP_ROOT (default /) in front. Tests and image builds point
# WIREUP_ROOT at a fake tree; nothing outside it is written.
#
# Changes: every write goes through put_file/put_link/remove_file, which skip
# identical content (a second run changes nothing), print instead of acting
# under --dry-run, and journal the old file so a failed install rolls back.
#
# Daemons and Slurm clients: only through `daemon` (see there).

LC_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LC_DIR=$(dirname "$LC_LIB")
PLUGIN_NAME=spank_wireup.so
BLOCK_TAG="# BEGIN wireup"
BLOCK_BEGIN="$BLOCK_TAG: managed by the wireup lifecycle scripts; edit provisioning_parameters.json instead"
BLOCK_END="# END wireup"

log() { printf '%s wireup[%s]: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${WIREUP_NODE_ROLE:-?}" "$*"; }
die() {
  log "ERROR: $*" >&2
  exit 1
}
dry() { [[ ${WIREUP_DRY_RUN:-0} == 1 ]]; }
# The calling script's header comment is its help text.
usage() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
  exit "$1"
}

# Settings, each overridable from the environment; see docs/lifecycle.md.
lc_settings() {
  WIREUP_ROOT=${WIREUP_ROOT:-/}
  [[ $WIREUP_ROOT == /* && -d $WIREUP_ROOT ]] || die "WIREUP_ROOT must be an existing absolute directory (got '$WIREUP_ROOT')"
  WIREUP_ROOT=$(cd "$WIREUP_ROOT" && pwd -P)
  SLURM_PREFIX=${WIREUP_SLURM_PREFIX:-/opt/slurm}
  SLURM_CONF_PATH=${WIREUP_SLURM_CONF:-$SLURM_PREFIX/etc/slurm.conf}
  SLURM_INCLUDE=${WIREUP_SLURM_INCLUDE:-$SLURM_PREFIX/include}
  PLUGIN_DIR=${WIREUP_PLUGIN_DIR:-/usr/local/lib/slurm}
  INSTALL_PREFIX=${WIREUP_PREFIX:-/usr/local}
  STATE_DIR=${WIREUP_STATE_DIR:-/var/lib/wireup}
  LOG_DIR=${WIREUP_LOG_DIR:-/var/log/provision}
  local p
  for p in "$SLURM_CONF_PATH" "$SLURM_INCLUDE" "$PLUGIN_DIR" "$INSTALL_PREFIX" "$STATE_DIR" "$LOG_DIR"; do
    [[ $p == /* ]] || die "paths must be absolute paths on the node (got '$p')"
  done
  PLUGIN_PATH=$PLUGIN_DIR/$PLUGIN_NAME
  MANIFEST=$STATE_DIR/installed-files
  JOURNAL_DIR=$STATE_DIR/journal
  PENDING=$STATE_DIR/reload-pending
  CHANGES=0
  PLUGSTACK_CHANGED=0
}

# node_path TARGET -> where TARGET lives under WIREUP_ROOT.
node_path() {
  if [[ $WIREUP_ROOT == / ]]; then printf '%s' "$1"; else printf '%s%s' "$WIREUP_ROOT" "$1"; fi
}

# ---------------------------------------------------------------- daemons
# Every daemon action and Slurm client call, in one place:
#   daemon active UNIT         exit 0 when UNIT (slurmctld, slurmd) runs
#   daemon restart UNIT        restart UNIT
#   daemon reconfigure         scontrol reconfigure (slurmctld pushes configs to configless nodes)
#   daemon srun-help CONF      srun --help, reading SLURM_CONF=CONF (loads the plugstack)
# WIREUP_LIFECYCLE_DAEMON_CMD, when set, runs instead as `CMD ACTION ARGS...`:
# tests point it at the local test cluster or record the calls.
daemon() {
  if [[ -n ${WIREUP_LIFECYCLE_DAEMON_CMD:-} ]]; then
    # shellcheck disable=SC2086 # the command may carry its own arguments
    ${WIREUP_LIFECYCLE_DAEMON_CMD} "$@"
    return
  fi
  local bin=$SLURM_PREFIX/bin
  [[ -x $bin/srun ]] || bin=$(dirname "$(command -v srun 2>/dev/null || echo /usr/bin/srun)")
  case $1 in
    active | restart)
      command -v systemctl >/dev/null ||
        die "systemctl not found: cannot $1 $2 (set WIREUP_LIFECYCLE_DAEMON_CMD on hosts without systemd)"
      if [[ $1 == active ]]; then systemctl is-active --quiet "$2"; else systemctl restart "$2"; fi
      ;;
    reconfigure) "$bin/scontrol" reconfigure ;;
    srun-help) SLURM_CONF=$2 "$bin/srun" --help ;;
    *) die "internal: unknown daemon action '$1'" ;;
  esac
}

# Runs a changing daemon action, or only says it would.
daemon_change() {
  if dry; then
    log "would run: $*"
  else
    log "running: $*"
    daemon "$@" || die "'$*' failed"
  fi
}

# ---------------------------------------------------------------- journal
# An install is a transaction: each replaced or removed file is first copied
# into JOURNAL_DIR (outside every Slurm config directory), each new one noted.
# rollback puts everything back; commit forgets the journal. A journal left
# by a crashed run is rolled back by the next run before it does anything.
journal_note() { # KIND PATH [BACKUP]
  local j
  j=$(node_path "$JOURNAL_DIR")
  mkdir -p "$j/files"
  printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$j/entries"
}

journal_backup() { # TARGET -> journals a copy of the file or link at TARGET
  local target=$1 j n
  j=$(node_path "$JOURNAL_DIR")
  mkdir -p "$j/files"
  n=1
  [[ ! -f $j/entries ]] || n=$(($(wc -l <"$j/entries") + 1))
  cp -a -- "$(node_path "$target")" "$j/files/$n" || die "cannot back up $target into $JOURNAL_DIR"
  journal_note old "$target" "$j/files/$n"
}

rollback() {
  local j kind target backup
  j=$(node_path "$JOURNAL_DIR")
  [[ -f $j/entries ]] || return 0
  log "rolling back: restoring the files this run changed"
  while IFS=$'\t' read -r kind target backup; do
    case $kind in
      new) rm -f -- "$(node_path "$target")" && log "removed $target (new in the failed run)" ;;
      old)
        if mv -f -- "$backup" "$(node_path "$target")"; then
          log "restored $target"
        else
          log "ERROR: could not restore $target from $backup"
        fi
        ;;
    esac
  done < <(tac "$j/entries")
  rm -rf -- "$j"
}

commit() { rm -rf -- "$(node_path "$JOURNAL_DIR")"; }

recover_crashed_run() {
  [[ -f $(node_path "$JOURNAL_DIR")/entries ]] || return 0
  if dry; then
    log "would roll back an unfinished earlier run (journal in $JOURNAL_DIR)"
  else
    log "an earlier run stopped half-way (journal in $JOURNAL_DIR)"
    rollback
    touch "$(node_path "$PENDING")"
  fi
}

# ---------------------------------------------------------------- files
# Writes SRC (a file on this machine) to TARGET on the node with MODE, unless
# it is already there. The new file is written beside TARGET under a dot name
# without a .so/.conf suffix and renamed over it: a running slurmstepd keeps
# its mapping of the old plugin, and nothing half-written is ever read.
put_file() { # SRC TARGET MODE
  local src=$1 target=$2 mode=$3 dest tmp what=write
  dest=$(node_path "$target")
  if [[ -f $dest && ! -L $dest ]] && cmp -s -- "$src" "$dest" &&
    [[ $(stat -c %a -- "$dest") == "$mode" ]]; then
    return 0
  fi
  [[ -e $dest || -L $dest ]] && what=replace
  CHANGES=$((CHANGES + 1))
  if dry; then
    log "would $what $target"
    return 0
  fi
  mkdir -p -- "$(dirname "$dest")"
  if [[ $what == replace ]]; then journal_backup "$target"; else journal_note new "$target"; fi
  tmp=$(mktemp "$(dirname "$dest")/.wireup-new.XXXXXX") || die "cannot write in $(dirname "$target")"
  if ! { cp -- "$src" "$tmp" && chmod "$mode" "$tmp" && mv -f -- "$tmp" "$dest"; }; then
    rm -f -- "$tmp"
    die "cannot write $target"
  fi
  log "$([[ $what == write ]] && echo wrote || echo replaced) $target"
}

put_link() { # LINK_VALUE TARGET
  local value=$1 target=$2 dest what=link
  dest=$(node_path "$target")
  [[ -L $dest && $(readlink -- "$dest") == "$value" ]] && return 0
  [[ -e $dest || -L $dest ]] && what=relink
  CHANGES=$((CHANGES + 1))
  if dry; then
    log "would $what $target -> $value"
    return 0
  fi
  mkdir -p -- "$(dirname "$dest")"
  if [[ $what == relink ]]; then journal_backup "$target"; else journal_note new "$target"; fi
  ln -sfn -- "$value" "$dest" || die "cannot link $target"
  log "${what}ed $target -> $value"
}

remove_file() { # TARGET
  local target=$1 dest
  dest=$(node_path "$target")
  [[ -e $dest || -L $dest ]] || return 0
  CHANGES=$((CHANGES + 1))
  if dry; then
    log "would remove $target"
    return 0
  fi
  journal_backup "$target"
  rm -f -- "$dest" || die "cannot remove $target"
  log "removed $target"
}

# Drops DIR and its parents below STOP while they are empty and named for
# wireup (share/wireup, include/wireup, /var/lib/wireup): shared directories
# such as /usr/local/bin or lib/slurm stay even when wireup was their last user.
prune_dirs() { # DIR STOP
  local d=$1 stop=${2%/}
  dry && return 0
  while [[ $d == "$stop"/* && ${d#"$stop"/} == *wireup* ]]; do
    rmdir -- "$(node_path "$d")" 2>/dev/null || break
    d=$(dirname "$d")
  done
}

# ---------------------------------------------------------------- daemons, together
# Makes the running daemons read the changed plugstack.conf. slurmctld ships
# plugstack.conf to configless nodes, so the controller reconfigures (this is
# also the fix for slurmds that cached their config before the plugin was
# registered); slurmd reads plugstack.conf only when it starts, so a running
# one is restarted (its jobs' slurmstepds live on). Needs ROLE and
# PLUGSTACK_CHANGED (set when this node's plugstack.conf changed).
reload_daemons() {
  RELOADED=1
  if [[ $ROLE == controller ]] && ((PLUGSTACK_CHANGED)); then
    if daemon active slurmctld; then
      daemon_change reconfigure
    else
      log "slurmctld is not running; it reads plugstack.conf when it starts"
    fi
  fi
  if daemon active slurmd; then
    daemon_change restart slurmd
  else
    log "slurmd is not running on this node; nothing to restart"
  fi
}

# EXIT trap of the steps: a run that fails after it began changing the node
# puts every file back and lets the daemons read the old config again.
IN_TXN=0
RELOADED=0
undo_on_failure() {
  local rc=$?
  if ((rc != 0 && IN_TXN)) && ! dry; then
    IN_TXN=0
    rollback
    if ((RELOADED)); then
      if (reload_daemons); then
        rm -f -- "$(node_path "$PENDING")"
      else
        log "ERROR: the daemons could not be reloaded after the rollback; the next run retries"
      fi
    fi
    log "ERROR: wireup step failed; this node is back to its state before the run"
  fi
  [[ -z ${SCRATCH:-} ]] || rm -rf -- "$SCRATCH"
  exit "$rc"
}
