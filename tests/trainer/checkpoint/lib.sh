# shellcheck shell=bash
# Checkpoint test helpers (sourced): the trainer test helpers plus
# fingerprints of saved weights.
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# spawn WORLD LOCAL_WORLD PORT ARGS...: WORLD processes, LOCAL_WORLD per
# "node" (so hybrid sharding spans nodes); rank 0's output on stdout.
spawn() {
  local world=$1 local_world=$2 port=$3 r
  shift 3
  local pids=()
  for ((r = 0; r < world; r++)); do
    if ((r == 0)); then
      RANK=$r WORLD_SIZE=$world LOCAL_RANK=$((r % local_world)) LOCAL_WORLD_SIZE=$local_world \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$WIREUP_TRAIN" "$@" &
    else
      RANK=$r WORLD_SIZE=$world LOCAL_RANK=$((r % local_world)) LOCAL_WORLD_SIZE=$local_world \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$WIREUP_TRAIN" "$@" >/dev/null &
    fi
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  return $rc
}

# A TCP port free on 127.0.0.1 now.
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# nodes WORLD ARGS...: WORLD ranks, 2 per emulated node (SLURMD_NODENAME n0, n1, ...; one
# node below 2 ranks), in Slurm job 4242 (JOB overrides), on a free port; rank 0's output on
# stdout, every rank's errors on stderr; each rank ends within 300 s.
nodes() {
  local world=$1 port r rc=0 pids=()
  shift
  port=$(free_port)
  for ((r = 0; r < world; r++)); do
    local out=/dev/null
    ((r == 0)) && out=/dev/stdout
    SLURM_JOB_ID=${JOB:-4242} SLURMD_NODENAME=n$((r / 2)) RANK=$r WORLD_SIZE=$world \
      LOCAL_RANK=$((r % 2)) LOCAL_WORLD_SIZE=$((world < 2 ? 1 : 2)) MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port timeout 300 "$WIREUP_TRAIN" "$@" >"$out" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  return $rc
}

# The SHA-256 of every chunk of a checkpoint, in file order: equal lists mean
# bit-identical weights and optimizer state (for the same world layout).
fingerprint() {
  /usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/metadata.json"))
for f in m["files"]:
    for c in f["chunks"]:
        print(f["file"], c["unit"], c["kind"], c["sha256"])
' "$1"
}

# resumed_as_uninterrupted N LOG A B: the last N losses of the uninterrupted run
# ($WORK/a.loss) are LOG's (a run resumed N steps before the end), and checkpoints A and B
# hold bit-identical weights.
resumed_as_uninterrupted() {
  tail -n "$1" "$WORK/a.loss" >"$WORK/a.tail"
  losses <"$2" >"$WORK/resumed.loss"
  if cmp -s "$WORK/a.tail" "$WORK/resumed.loss"; then pass "losses after resume are identical"; else
    fail "losses after resume differ"; paste "$WORK/a.tail" "$WORK/resumed.loss" >&2; fi
  if diff <(fingerprint "$3") <(fingerprint "$4") >/dev/null; then
    pass "final weights bit-identical"; else fail "final weights differ"; fi
}
