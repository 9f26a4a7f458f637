# shellcheck shell=bash
# Helpers for the sbatch-template tests on the local cluster (sourced, not run).
# CTest provides the cluster variables (wireup_add_cluster_test), the built
# WIREUP_TRAIN, WIREUP_LAUNCH, WIREUP_PREP and WIREUP_PLUGIN (spank_wireup.so).
# The binaries are linked into one directory, WIREUP_BIN_DIR, as an install
# puts them. The templates run exactly as users submit them; only environment
# variables and sbatch's command line scale them down to CPUs.
set -euo pipefail

: "${WIREUP_TEST_CLUSTER_DIR:?run through ctest}" "${WIREUP_TEST_CLUSTER_SCRIPT:?}"
: "${WIREUP_TRAIN:?}" "${WIREUP_LAUNCH:?}" "${WIREUP_PREP:?}" "${WIREUP_PLUGIN:?}"
eval "$(bash "$WIREUP_TEST_CLUSTER_SCRIPT" env "$WIREUP_TEST_CLUSTER_DIR")"
# shellcheck disable=SC2034  # used by the scripts that source this
TEMPLATES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../sbatch-templates" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-templates.XXXXXX")
JOBS=()
MEMORY_CHECKPOINT_DIR=   # made below
cleanup() {
  local j
  for j in "${JOBS[@]}"; do scancel "$j" 2>/dev/null || true; done
  rm -rf "$WORK" ${MEMORY_CHECKPOINT_DIR:+"$MEMORY_CHECKPOINT_DIR"}
}
trap cleanup EXIT
mkdir "$WORK/bin"
ln -s "$WIREUP_TRAIN" "$WORK/bin/wireup-train"
ln -s "$WIREUP_LAUNCH" "$WORK/bin/wireup-launch"
ln -s "$WIREUP_PREP" "$WORK/bin/wireup-prep"
export WIREUP_BIN_DIR=$WORK/bin
# Memory snapshots (on by default in llama-fsdp and sft-llama3) in a directory of
# this test's, removed with WORK, not /dev/shm/wireup-JOBID: a killed job leaves
# its snapshots behind, and other tests count what wireup leaves in /dev/shm.
# In /dev/shm still (memory, as on a cluster), else under WORK.
MEMORY_CHECKPOINT_DIR=$(mktemp -d /dev/shm/templates-memory.XXXXXX 2>/dev/null) ||
  { MEMORY_CHECKPOINT_DIR=$WORK/memory && mkdir "$MEMORY_CHECKPOINT_DIR"; }
export MEMORY_CHECKPOINT_DIR
unset WIREUP_TRAIN WIREUP_LAUNCH WIREUP_PREP   # the templates find them in WIREUP_BIN_DIR
# The line the cluster fixture starts with (other tests put it back, too).
bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$WIREUP_TEST_CLUSTER_DIR" "optional $WIREUP_PLUGIN default=off"
export PYTHON=/usr/bin/python3   # Debian's PyTorch (the first python3 on PATH may lack it)

# shellcheck source=../lib/assert.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.sh"
# shellcheck source=../lib/cluster_nodes.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster_nodes.sh"

# submit NAME SBATCH_ARGS... TEMPLATE: sbatch, then a background watcher (job_exit_code);
# the job id is in $WORK/NAME.id once accepted, its exit code in $WORK/NAME.rc at the end,
# its output in $WORK/NAME.out. Not sbatch --wait: it polls every 2 s and reports 0 for a
# job whose record slurmctld purged in between (MinJobAge), so a failed job could read as
# a success.
submit() {
  local name=$1 id
  shift
  rm -f "$WORK/$name".{id,rc,out}
  if ! id=$(sbatch --parsable -o "$WORK/$name.out" "$@" 2>"$WORK/$name.err"); then
    fail "sbatch $name was not accepted: $(cat "$WORK/$name.err" 2>/dev/null)"
    return 1
  fi
  id=$(tr -dc '0-9' <<<"${id%%;*}")
  echo "$id" >"$WORK/$name.id"
  JOBS+=("$id")
  (
    rc=$(job_exit_code "$id")
    echo "$rc" >"$WORK/$name.rc.tmp" && mv "$WORK/$name.rc.tmp" "$WORK/$name.rc"
  ) &
}

# job_exit_code ID: polls the job every 0.2 s until it has ended and is no longer
# completing; prints its exit code as sbatch --wait would (the signal's job: 1), or 125
# when its record is gone before that.
job_exit_code() {
  local line state code sig out
  while :; do
    if ! line=$(scontrol -o show job "$1" 2>&1); then
      if [[ $line == *"Invalid job id"* ]]; then
        echo "job $1 was purged before its exit code was read" >&2
        echo 125
        return
      fi
      sleep 0.2
      continue
    fi
    state=$(sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' <<<"$line")
    case $state in
      PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUE* | RESIZING | \
        SIGNALING | STAGE_OUT | "") sleep 0.2 ;;
      *)
        read -r code sig < <(sed -n 's/.* ExitCode=\([0-9]*\):\([0-9]*\).*/\1 \2/p' <<<"$line")
        out=${code:-1}
        [[ ${sig:-0} != 0 ]] && out=1
        [[ $state != COMPLETED && $out == 0 ]] && out=1
        echo "$out"
        return ;;
    esac
  done
}

# wait_job NAME SECONDS: until the job has ended; prints its exit code (124: still running).
wait_job() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [[ -s $WORK/$1.rc ]] && { cat "$WORK/$1.rc"; return 0; }
    sleep 0.1
  done
  echo 124
}

# run_job NAME SECONDS SBATCH_ARGS... TEMPLATE: submit and wait; prints the exit code.
run_job() {
  local name=$1 limit=$2
  shift 2
  submit "$name" "$@" || { echo 1; return 0; }
  wait_job "$name" "$limit"
}

# show NAME: the job's output, indented, for the test log.
show() { sed "s/^/  | /" "$WORK/$1.out" 2>/dev/null || true; }

# kill_ranks JOBID: SIGKILL to every task of the job's running step at once, as a
# failed node ends them: nothing is saved on the way out. The batch script lives on.
kill_ranks() {
  local step
  step=$(squeue -h -s -j "$1" -o '%i' | grep -E '^[0-9]+\.[0-9]+$' | head -n 1)
  [[ -n $step ]] || { fail "job $1 has no running step to kill"; return 1; }
  echo "killing step $step (SIGKILL)"
  scancel --signal=KILL "$step"
}

# expect DESCRIPTION COMMAND...: pass when COMMAND succeeds.
expect() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
