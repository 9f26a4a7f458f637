# shellcheck shell=bash
# container.sh: what the sbatch templates (prep-data, llama-fsdp, eval-export,
# sft-llama3) share for running their steps in a pyxis container, sourced by each
# at the start of its job (docs/containers.md#the-templates). Installed with
# wireup as share/wireup/sbatch-templates/lib/container.sh; a template finds it
# beside the file that was submitted (scontrol's Command=), else there.
#
# The template defines die MESSAGE (prints "NAME: error: MESSAGE", exits 2) and
# CONTAINER_IMAGE, CONTAINER_MOUNTS (both possibly empty) before calling these.

# wireup_abs PATH: PATH absolute against the job's working directory (where
# sbatch starts the script: the submit directory), without following links or
# needing it to exist; empty stays empty. A step in a container starts in the
# image's working directory, so a relative path there names another file.
wireup_abs() { [[ -z $1 ]] || realpath -ms -- "$1"; }

# wireup_dir_of PATH: the directory to mount for PATH: itself if it is a
# directory, else the one holding it.
wireup_dir_of() { if [[ -d $1 ]]; then wireup_abs "$1"; else dirname -- "$(wireup_abs "$1")"; fi; }

# wireup_mounts DIR...: the srun --container-mounts value for steps that read or
# write under DIR...: the CONTAINER_MOUNTS entries as given, then each DIR at its
# own path, unless an entry mounted at its own path (SRC == DST, /fsx:/fsx) or a
# DIR listed before it already holds it; DIRs sorted, none twice. A DIR with ','
# or ':' cannot be written in that syntax: die names it.
wireup_mounts() { # DIR...
  local d m dst out=()
  local -a given=() kept=()
  IFS=, read -r -a given <<<"$CONTAINER_MOUNTS"
  for m in "${given[@]}"; do
    [[ -n $m ]] || continue
    dst=${m#*:} dst=${dst%%:*}
    [[ ${m%%:*} == "$dst" ]] && kept+=("$dst")
    out+=("$m")
  done
  while read -r d; do
    [[ -n $d ]] || continue
    [[ $d == *[,:]* ]] &&
      die "$d: a path with ',' or ':' cannot be a container mount (srun --container-mounts syntax); move it or use another path"
    for m in "${kept[@]}"; do [[ $d == "$m" || $d == "${m%/}"/* ]] && continue 2; done
    kept+=("$d") out+=("$d:$d")
  done < <(printf '%s\n' "$@" | LC_ALL=C sort -u)
  (IFS=,; echo "${out[*]}")
}

# wireup_container DIR...: sets container (the srun options of every step) and
# container_summary (for the template's [job] line). CONTAINER_IMAGE empty: no
# options, "container=none". Else pyxis must be there (srun lists
# --container-image) and the steps get the image and wireup_mounts DIR...
# (DIRs absolute).
# shellcheck disable=SC2034 # container, container_summary: read by the template
wireup_container() { # DIR...
  container=() container_summary=container=none
  [[ -n $CONTAINER_IMAGE ]] || return 0
  [[ $(srun --help 2>&1) == *--container-image* ]] ||
    die "CONTAINER_IMAGE needs pyxis (srun --help lists no --container-image)"
  local mounts
  mounts=$(wireup_mounts "$@") || exit 2
  container=(--container-image="$CONTAINER_IMAGE")
  [[ -z $mounts ]] || container+=(--container-mounts="$mounts")
  container_summary="container=$CONTAINER_IMAGE mounts=${mounts:-none}"
}
