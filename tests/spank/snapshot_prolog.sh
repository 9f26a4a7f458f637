#!/usr/bin/env bash
# The job prolog makes each job's memory snapshot directory (DIR/wireup-JOBID in each
# of the admin's memory_snapshot_dirs) for the job's user before any task starts:
# 0700, the user's, with the owner marker wireup-train writes and a line saying the
# prolog made it. Whatever another user (nobody) put at that predictable name first (a
# directory, a symlink, a file), or the user's own directory with mode 0755, is moved
# aside unfollowed and unchanged, logged, and removed by the job's epilog; the node is
# never drained for it. Each job is submitted held, so that its id is known before the
# squatter takes its name.
source "$(dirname "$0")/lib.sh"
shm=$WORK/shm
mkdir -m 1777 "$shm"
plugstack default=off "memory_snapshot_dirs=$shm"
trap 'plugstack default=off; rm -rf "$WORK"' EXIT

# squatted_job 'SETUP': a held 2-node job whose tasks print what they find at
# $shm/wireup-JOBID ("UID MODE TYPE MARKER", the marker's newlines as |); SETUP runs with $d set to that
# path before the job is released. Prints the job id when the job has ended.
squatted_job() {
  local id d
  id=$(sbatch --parsable --hold -N2 -o "$WORK/out.%j" --wrap "srun -N2 -n2 bash -c '
    d=$shm/wireup-\$SLURM_JOB_ID; echo \$(stat -c \"%u %a %F\" \"\$d\") \$(tr \"\\n\" \"|\" <\"\$d/owner\")'")
  # shellcheck disable=SC2034 # read by SETUP, which eval runs
  d=$shm/wireup-$id
  eval "$1"
  scontrol release "$id"
  for _ in $(seq 300); do
    squeue -h -j "$id" 2>/dev/null | grep -q . || break
    sleep 0.2
  done
  echo "$id"
}
logged() {  # logged JOB TEXT: waits (60 s at most) for a slurmd log line of JOB holding TEXT
  for _ in $(seq 300); do
    grep -hF "spank_wireup: " "$CLUSTER"/log/slurmd.*.log | grep -F "job $1" |
      grep -qF -- "$2" && return 0
    sleep 0.2
  done
  return 1
}
# prolog_did JOB SQUAT_WHY: every task found the private directory the prolog made; the
# prolog logged what held the name; the epilog removed both the directory (holding only
# its marker: logged at debug level, not in this cluster's log) and what was moved aside.
prolog_did() {
  local id=$1 marker
  marker="0 700 directory wireup-memory-snapshot-owner 1|job $id|uid 0|made_by prolog|"
  check "job $id: both tasks found a private directory of the job's user with its marker" \
    "$(cat "$WORK/out.$id")" "$(printf '%s\n%s' "$marker" "$marker")"
  logged "$id" "moved aside what held the name ($2) to $shm/.wireup-prolog-$id-" &&
    pass "job $id: the prolog logged: $2" ||
    fail "job $id: $(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
  logged "$id" "removed what the job prolog moved aside in $shm for job $id" &&
    pass "job $id: the epilog removed what was moved aside" ||
    fail "job $id: $(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
  check "job $id: nothing of it is left in $shm" "$(ls -A "$shm")" ""
}

if ((EUID != 0)); then
  echo "skipped: the squatters need root (chown to nobody)"
  exit 77
fi

id=$(squatted_job 'mkdir -m 0700 "$d"; echo squat >"$d/data"; chown -R 65534:65534 "$d"')
prolog_did "$id" "a directory of uid 65534, not the job's user (uid 0)"

mkdir -m 0755 "$WORK/victim"
echo keep >"$WORK/victim/keep"
chown -R 65534:65534 "$WORK/victim"
id=$(squatted_job 'ln -s "$WORK/victim" "$d"; chown -h 65534:65534 "$d"')
prolog_did "$id" "a symlink, never followed"
check "the symlink's target: its owner, mode and content as they were" \
  "$(stat -c '%u %a' "$WORK/victim"; ls -A "$WORK/victim"; cat "$WORK/victim/keep")" \
  "$(printf '65534 755\nkeep\nkeep')"

id=$(squatted_job 'echo squat >"$d"; chown 65534 "$d"')
prolog_did "$id" "a file or other non-directory"

id=$(squatted_job 'mkdir -m 0755 "$d"; printf "wireup-memory-snapshot-owner 1\njob %s\nuid 0\n" "$id" >"$d/owner"')
prolog_did "$id" "mode 0755, not 0700"

nodes_idle  # none drained for a squatter
finish
