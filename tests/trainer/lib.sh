# shellcheck shell=bash
# Helpers for wireup-train tests (sourced). CTest provides WIREUP_TRAIN and
# WIREUP_LAUNCH (the built binaries).
set -euo pipefail
: "${WIREUP_TRAIN:?run through ctest}" "${WIREUP_LAUNCH:?}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-train-test.XXXXXX")
trap '[[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"' EXIT
# shellcheck source=../lib/assert.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.sh"

# train NPROC ARGS...: wireup-train on NPROC local processes (wireup-launch
# --standalone); prints rank 0's output, returns the launcher's exit code.
train() {
  local n=$1
  shift
  "$WIREUP_LAUNCH" --standalone --nproc-per-node="$n" --no-prefix --local-ranks-filter=0 \
    -- "$WIREUP_TRAIN" "$@"
}

# The loss column of [train] lines, one per line.
losses() { sed -n 's/^\[train\] step=[0-9/]* loss=\([0-9.]*\).*/\1/p'; }

# same_losses DESCRIPTION FILE_A FILE_B RELATIVE_TOLERANCE
same_losses() {
  local verdict
  verdict=$(paste "$2" "$3" | awk -v tol="$4" '
    NF != 2 { bad = 1; next }
    { d = $1 - $2; if (d < 0) d = -d; r = d / ($1 > 0 ? $1 : 1); if (r > worst) worst = r; n++ }
    END { if (bad || n == 0) print "mismatch"; else if (worst <= tol) print "ok " n " " worst; else print "off " worst }')
  if [[ $verdict == ok* ]]; then pass "$1 ($verdict)"; else fail "$1: $verdict"; paste "$2" "$3" >&2; fi
}

# train_all NPROC ARGS...: like train, with every rank's output.
train_all() {
  local n=$1
  shift
  "$WIREUP_LAUNCH" --standalone --nproc-per-node="$n" -- "$WIREUP_TRAIN" "$@"
}

# start2 PORT OUT ARGS...: wireup-train as ranks 0 and 1 of one node in the
# background (no launcher: a test may stop either), their pids in R0 and R1,
# their output in OUT.0 and OUT.1.
# shellcheck disable=SC2034  # R0 and R1 are the caller's
start2() {
  local p=$1 out=$2
  shift 2
  RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
    "$WIREUP_TRAIN" "$@" >"$out.0" 2>&1 &
  R0=$!
  RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
    "$WIREUP_TRAIN" "$@" >"$out.1" 2>&1 &
  R1=$!
}

# stall_of FILE RANK WHERE: where the first stall line in FILE (a rank that gave up
# on rank RANK, docs/reliability.md) says RANK is missing: "collective" for
# "peer stalled: ... in KIND #N ...; not arrived: rank RANK (WHERE...", "commit"
# for rank 0's "checkpoint stalled: ... committing DIR; not arrived: rank RANK
# (rank-0000RANK.json)" (the stop landed in a save: rank RANK never wrote its
# part); nothing when neither names RANK. The line itself goes to stderr.
stall_of() {
  local line json
  line=$(grep -m1 -E '^wireup-train: (peer stalled:|checkpoint stalled: rank 0 .* committing )' "$1" || true)
  echo "$line" >&2
  printf -v json 'rank-%05d.json' "$2"
  if [[ $line == *"peer stalled:"* && $line == *"not arrived: rank $2 ($3"* &&
    $line =~ in\ (all_gather|reduce_scatter|all_reduce|broadcast|barrier)\ \# ]]; then
    echo collective
  elif [[ $line == *"checkpoint stalled:"* && $line == *"; not arrived: rank $2 ($json)"* ]]; then
    echo commit
  fi
}
