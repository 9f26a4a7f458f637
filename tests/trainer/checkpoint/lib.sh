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
