# shellcheck shell=bash
# plugstack.conf handling for the wireup lifecycle scripts (sourced after common.sh).
#
# Layout (configless-safe): the plugin line lives directly in plugstack.conf,
# between the BLOCK_BEGIN and BLOCK_END marker comments. No include, no
# plugstack.conf.d file: configless compute nodes receive plugstack.conf from
# slurmctld, but an included file only when the include names a bare file
# beside slurm.conf, and a wildcard include not at all. A line in the one file
# that always ships cannot go missing. See docs/lifecycle.md.

# The plugstack.conf this node's Slurm reads: PlugStackConfig from slurm.conf,
# else plugstack.conf beside slurm.conf (Slurm's default).
plugstack_path() {
  local value
  value=$(awk -F= 'tolower($1) ~ /^[ \t]*plugstackconfig[ \t]*$/ { v = $2 } END { print v }' \
    "$(node_path "$SLURM_CONF_PATH")")
  value=${value%%#*}
  value=${value//[[:space:]]/}
  if [[ -z $value ]]; then
    echo "$(dirname "$SLURM_CONF_PATH")/plugstack.conf"
  elif [[ $value == /* ]]; then
    echo "$value"
  else
    echo "$(dirname "$SLURM_CONF_PATH")/$value"
  fi
}

# A plugstack.conf that is a symlink is edited where it points (inside the root).
resolve_link() { # TARGET
  local real root=${WIREUP_ROOT%/}
  [[ -L $(node_path "$1") ]] || { echo "$1"; return 0; }
  real=$(realpath -m -- "$(node_path "$1")")
  [[ -z $root || $real == "$root"/* ]] || die "$1 links outside $WIREUP_ROOT ($real)"
  echo "${real#"$root"}"
}

# True when a plugstack line, given as its first two words, loads spank_wireup.so.
loads_wireup() { # WORD1 WORD2
  [[ $1 =~ ^(required|optional)$ && ($2 == "$PLUGIN_NAME" || $2 == */"$PLUGIN_NAME") ]]
}

# True when a plugstack line, given as its first two words, loads a container
# plugin (pyxis: spank_pyxis.so). Its task_init moves each task into the
# container and imports the image's environment with overwrite, so wireup's
# task_init must come after it.
loads_container_plugin() { # WORD1 WORD2
  [[ $1 =~ ^(required|optional)$ && ${2##*/} == *pyxis* ]]
}

# The number of the last line of plugstack.conf CURRENT (a file on this
# machine) that loads a container plugin, directly or through an include (an
# include whose pattern names pyxis, or whose files load it); 0 when none.
last_container_line() { # CURRENT
  local cur=$1 l n=0 last=0 pat f fl
  local -a w ww
  [[ -f $cur ]] || { echo 0; return 0; }
  while IFS= read -r l || [[ -n $l ]]; do
    n=$((n + 1))
    l=${l%%#*}
    read -r -a w <<<"$l"
    ((${#w[@]} >= 2)) || continue
    if loads_container_plugin "${w[0]}" "${w[1]}"; then
      last=$n
    elif [[ ${w[0]} == include ]]; then
      pat=${w[1]}
      if [[ $pat == /* ]]; then pat=$(node_path "$pat"); else pat=$(dirname "$cur")/$pat; fi
      [[ ${pat##*/} == *pyxis* ]] && { last=$n; continue; }
      while IFS= read -r f; do
        while IFS= read -r fl || [[ -n $fl ]]; do
          fl=${fl%%#*}
          read -r -a ww <<<"$fl"
          ((${#ww[@]} >= 2)) && loads_container_plugin "${ww[0]}" "${ww[1]}" && last=$n
        done <"$f"
      done < <(compgen -G "$pat" || true)
    fi
  done <"$cur"
  echo "$last"
}

# Writes to OUT the plugstack.conf CURRENT (a file on this machine, may be
# absent) with the managed block holding LINE: in place of an existing block
# that already follows every container plugin line, else right after the last
# such line, else appended. An empty LINE removes the block. Lines outside the
# block that load spank_wireup.so too (a hand-made registration) are dropped,
# because a plugin registered twice warns on every srun.
render_plugstack() { # CURRENT LINE OUT
  local cur=$1 line=$2 out=$3 l n=0 in_block=0 placed=0 after block_at
  local -a w
  : >"$out"
  after=$(last_container_line "$cur")
  block_at=0
  [[ -f $cur ]] && block_at=$(grep -n -m1 -F -- "$BLOCK_TAG" "$cur" | cut -d: -f1 || true)
  block_at=${block_at:-0}
  if [[ -n $line ]] && ((after > 0)); then
    if ((block_at > 0 && block_at < after)); then
      log "plugstack.conf: moving wireup's line after line $after, the container plugin (pyxis): its task_init must run first, so that wireup plans inside the container and after the image's environment is imported"
    else
      log "plugstack.conf: wireup's line follows the container plugin (pyxis) on line $after"
    fi
  fi
  if [[ -f $cur ]]; then
    while IFS= read -r l || [[ -n $l ]]; do
      n=$((n + 1))
      if ((in_block)); then
        [[ $l == "$BLOCK_END"* ]] && in_block=0
        continue
      fi
      if [[ $l == "$BLOCK_TAG"* ]]; then
        in_block=1
        if [[ -n $line ]] && ((!placed && n > after)); then
          printf '%s\n%s\n%s\n' "$BLOCK_BEGIN" "$line" "$BLOCK_END" >>"$out"
          placed=1
        fi
        continue
      fi
      read -r -a w <<<"$l"
      if ((${#w[@]} >= 2)) && loads_wireup "${w[0]}" "${w[1]}"; then
        log "plugstack.conf line $n loads $PLUGIN_NAME outside the managed block; dropping it: $l"
        continue
      fi
      printf '%s\n' "$l" >>"$out"
      if [[ -n $line ]] && ((!placed && block_at > 0 && n == after)); then
        printf '%s\n%s\n%s\n' "$BLOCK_BEGIN" "$line" "$BLOCK_END" >>"$out"
        placed=1
      fi
    done <"$cur"
    ((!in_block)) || die "$cur: '$BLOCK_TAG' without a '$BLOCK_END' line; repair the file by hand"
  fi
  if [[ -n $line ]] && ((!placed)); then
    printf '%s\n%s\n%s\n' "$BLOCK_BEGIN" "$line" "$BLOCK_END" >>"$out"
  fi
}

# Refuses a plugstack.conf whose includes register spank_wireup.so as well,
# and warns about includes that configless nodes never receive.
check_includes() { # PLUGSTACK_TARGET
  local ps=$1 base l n=0 pat f m=0 fl
  local -a w ww
  base=$(dirname "$ps")
  [[ -f $(node_path "$ps") ]] || return 0
  while IFS= read -r l || [[ -n $l ]]; do
    n=$((n + 1))
    read -r -a w <<<"$l"
    [[ ${w[0]:-} == include && -n ${w[1]:-} ]] || continue
    pat=${w[1]}
    [[ $pat == /* ]] || pat=$base/$pat
    if [[ $pat == *[*?[]* ]]; then
      log "warning: $ps line $n includes a wildcard ($pat); configless nodes never receive such files"
    elif [[ ${w[1]} == */* ]]; then
      log "warning: $ps line $n includes $pat by path; configless nodes receive only includes named by a bare file name beside slurm.conf"
    fi
    while IFS= read -r f; do
      m=0
      while IFS= read -r fl || [[ -n $fl ]]; do
        m=$((m + 1))
        read -r -a ww <<<"$fl"
        if ((${#ww[@]} >= 2)) && loads_wireup "${ww[0]}" "${ww[1]}"; then
          die "$PLUGIN_NAME is also registered in ${f#"${WIREUP_ROOT%/}"} line $m (included by $ps line $n). Remove it there: wireup registers itself in $ps, and a plugin registered twice warns on every srun"
        fi
      done <"$f"
    done < <(compgen -G "$(node_path "$pat")" || true)
  done <"$(node_path "$ps")"
}

# Fails when plugstack.conf PLUGSTACK_TARGET loads spank_wireup.so before a
# container plugin (see loads_container_plugin).
check_order() { # PLUGSTACK_TARGET
  local cur l n=0 ours=0 after
  local -a w
  cur=$(node_path "$1")
  [[ -f $cur ]] || return 0
  while IFS= read -r l || [[ -n $l ]]; do
    n=$((n + 1))
    l=${l%%#*}
    read -r -a w <<<"$l"
    ((${#w[@]} >= 2)) && loads_wireup "${w[0]}" "${w[1]}" && { ours=$n; break; }
  done <"$cur"
  after=$(last_container_line "$cur")
  ((ours == 0 || ours > after)) ||
    die "$1 loads $PLUGIN_NAME on line $ours, before the container plugin (pyxis) on line $after; wireup must come after it"
  ((after == 0)) || log "verified: $PLUGIN_NAME (line $ours) comes after the container plugin (line $after)"
}
