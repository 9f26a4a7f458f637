# shellcheck shell=bash
# Reading the pyxis stand-in's record (record=FILE, tests/containers/pyxis_standin.cpp:
# one line per task: job= step= rank= image= mounts= cwd= ns= argv=...). Sourced.

# record_steps LOG JOB: each program of the job's tasks (with its first argument
# when that is a subcommand) and how many tasks ran it, "wireup-prep=1 wireup-train eval=2 ".
record_steps() {
  grep "^job=$2 " "$1" | sed 's/.* argv=//' | awk '{
    n = split($1, p, "/"); k = p[n]; if ($2 !~ /^-/ && $2 != "") k = k " " $2; print k }' |
    LC_ALL=C sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s=%s ", substr($0, 2), c }'
}

# record_unmounted LOG JOB [DIR...]: the absolute paths on the job's command lines
# (also the value of --opt=PATH) that no mount destination of their task holds,
# nor a DIR (what the image itself provides); nothing when every path is mounted.
record_unmounted() {
  local log=$1 job=$2 line mounts argv a m d ok
  shift 2
  local -a ms
  grep "^job=$job " "$log" | while read -r line; do
    mounts=${line#* mounts=} mounts=${mounts%% *} argv=${line#* argv=}
    IFS=, read -r -a ms <<<"$mounts"
    for a in $argv; do
      a=${a#*=}
      [[ $a == /* ]] || continue
      ok=0
      for m in "${ms[@]}" "$@"; do
        d=${m#*:} d=${d%%:*}
        [[ $a == "$d" || $a == "${d%/}"/* ]] && ok=1
      done
      ((ok)) || echo "$a"
    done
  done | sort -u | tr '\n' ' '
}

# record_mounts LOG JOB: the --container-mounts value of the job's first task.
record_mounts() { grep -m1 "^job=$2 " "$1" | sed 's/.* mounts=\([^ ]*\) .*/\1/'; }
