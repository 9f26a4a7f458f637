#!/usr/bin/env bash
# The job epilog removes a finished job's memory snapshots (DIR/wireup-JOBID in each
# of the admin's memory_snapshot_dirs) on every node, however the job ended, and
# never anything else: another job's directory, a symlink, a file of another user,
# or any of it when the admin turned it off. Names with control bytes reach slurmd's
# log escaped, and the admin's budget (memory_snapshot_max_entries) bounds it. The trees are made by the jobs
# themselves, with the owner marker wireup-train writes (the trainer's own run is
# in tests/trainer/memory_on_cluster.sh), after removing the directory the job prolog
# made (snapshot_prolog.sh): the epilog must be safe whatever the user leaves there.
source "$(dirname "$0")/lib.sh"
shm=$WORK/shm
mkdir -m 1777 "$shm"
plugstack default=off "memory_snapshot_dirs=$WORK/none,$shm"
trap 'plugstack default=off; rm -rf "$WORK"' EXIT

# make_tree JOB_MARKER [EXTRA]: the job's first task makes $shm/wireup-$SLURM_JOB_ID
# with two nodes' snapshots and a marker naming JOB_MARKER (JOB: the job's own id),
# runs EXTRA there, prints the job id; the job then ends with exit code 3.
make_tree() {
  timeout 60 srun -N2 -n2 bash -c '
    [ "$SLURM_PROCID" = 0 ] || exit 3
    d='"$shm"'/wireup-$SLURM_JOB_ID; rm -rf "$d"
    job='"$1"'; [ "$job" = JOB ] && job=$SLURM_JOB_ID
    mkdir -m 0700 "$d" "$d/n0" "$d/n1" "$d/n0/snap-00000004" "$d/n1/snap-00000004"
    printf "wireup-memory-snapshot-owner 1\njob %s\nuid %s\n" "$job" "$(id -u)" >"$d/owner"
    for n in n0 n1; do
      head -c 4096 /dev/zero >"$d/$n/snap-00000004/rank-00000.bin"
      : >"$d/$n/snap-00000004/complete"
    done
    cd "$d" && eval "$2"
    echo "$SLURM_JOB_ID"; exit 3' _ "$1" "${2:-true}" 2>/dev/null || true
}
# logged JOB TEXT: waits (60 s at most) for a slurmd log line of JOB's epilog holding TEXT.
logged() {
  for _ in $(seq 300); do
    grep -hF "spank_wireup: " "$CLUSTER"/log/slurmd.*.log | grep -F "of job $1 " |
      grep -qF -- "$2" && return 0
    sleep 0.2
  done
  return 1
}

id=$(make_tree JOB)
[[ $id =~ ^[0-9]+$ ]] || fail "no job id from the tree's job: '$id'"
logged "$id" "removed the memory snapshots $shm/wireup-$id" &&
  pass "a failed job's snapshots removed: $(grep -hF "of job $id " "$CLUSTER"/log/slurmd.*.log |
    sed 's/.*spank_wireup: //' | head -1)" ||
  fail "no removal logged for job $id: $(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
[[ ! -e $shm/wireup-$id ]] && pass "and the directory is gone" || fail "left: $(find "$shm")"

id=$(make_tree 4242)
logged "$id" "its owner marker names job 4242" && pass "another job's marker: left, and said why" ||
  fail "$(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
[[ -f $shm/wireup-$id/n1/snap-00000004/rank-00000.bin ]] && pass "its files untouched" ||
  fail "files of a directory marked for job 4242 were removed"

# A symlink named wireup-JOBID, to a tree whose marker names the job: never followed.
mkdir -m 0700 "$WORK/target"
id=$(timeout 60 srun -N1 -n1 bash -c 'rm -rf '"$shm"'/wireup-$SLURM_JOB_ID
  printf "wireup-memory-snapshot-owner 1\njob %s\nuid %s\n" \
  "$SLURM_JOB_ID" "$(id -u)" >'"$WORK"'/target/owner
  ln -s '"$WORK"'/target '"$shm"'/wireup-$SLURM_JOB_ID; echo "$SLURM_JOB_ID"')
logged "$id" "wireup-$id: a symlink, never followed" && pass "a symlink: left, and said why" ||
  fail "$(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
[[ -f $WORK/target/owner ]] && pass "the symlink's target untouched" || fail "the target was emptied"

if ((EUID == 0)); then
  # A file of another user inside the job's tree stays; the rest goes.
  id=$(make_tree JOB 'head -c 10 /dev/zero >n1/foreign; chown 65534 n1/foreign')
  logged "$id" "n1/foreign: owned by uid 65534, not the job's user" &&
    pass "another user's file: left, and named" ||
    fail "$(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
  [[ -f $shm/wireup-$id/n1/foreign && ! -e $shm/wireup-$id/n0 ]] &&
    pass "only it stays" || fail "after the sweep: $(find "$shm/wireup-$id")"

  # A name with a newline and ESC reaches slurmd's log escaped: no forged line.
  id=$(make_tree JOB 'f=$(printf "n1/x\nspank_wireup: forged line\033[2K"); : >"$f"; chown 65534 "$f"')
  logged "$id" 'n1/x\nspank_wireup: forged line\x1b[2K: owned by uid 65534' &&
    pass "a name with control bytes: logged escaped, on its own line" ||
    fail "$(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
  forged=$(grep -hF "spank_wireup: forged line" "$CLUSTER"/log/slurmd.*.log |
    grep -vF 'x\nspank_wireup: forged line' || true)
  check "no forged line in slurmd's log" "$forged" ""

  # The admin's budget reaches the epilog: a tree past it stops, and says so.
  plugstack default=off "memory_snapshot_dirs=$shm" memory_snapshot_max_entries=8
  id=$(make_tree JOB 'for i in $(seq 40); do : >"n0/extra$i"; done')
  logged "$id" "stopped: its budget of 8 entries (memory_snapshot_max_entries) was spent" &&
    pass "memory_snapshot_max_entries=8: the sweep stopped at its budget, logged" ||
    fail "$(grep -h spank_wireup "$CLUSTER"/log/slurmd.*.log | tail -3)"
fi

# Turned off: the tree of a finished job stays.
plugstack default=off memory_snapshot_dirs=off
id=$(make_tree JOB)
nodes_idle
sleep 1
[[ -f $shm/wireup-$id/owner ]] && pass "memory_snapshot_dirs=off: nothing removed" ||
  fail "removed with memory_snapshot_dirs=off"
nodes_idle
finish
