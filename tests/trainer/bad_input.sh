#!/usr/bin/env bash
# Bad input: a clear error on every rank before any collective, exit 2, no hang.
source "$(dirname "$0")/lib.sh"

# expect_error DESCRIPTION NEEDLE NPROC ARGS...: NPROC ranks started directly
# (a launcher would stop the others at the first failure), each must say why.
port=29760
expect_error() {
  local what=$1 needle=$2 n=$3 r
  shift 3
  port=$((port + 1))
  local pids=()
  for ((r = 0; r < n; r++)); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port timeout 60 "$WIREUP_TRAIN" "$@" >"$WORK/out$r" 2>&1 &
    pids+=($!)
  done
  local codes=() ok=0
  for p in "${pids[@]}"; do set +e; wait "$p"; codes+=($?); set -e; done
  for ((r = 0; r < n; r++)); do
    if ((codes[r] == 124)); then fail "$what: rank $r hung"; continue; fi
    ((codes[r] == 2)) || fail "$what: rank $r exit ${codes[r]}"
    grep -q "wireup-train\[rank $r\]: error: .*$(sed 's/[][\.*^$]/\\&/g' <<<"$needle")" "$WORK/out$r" &&
      ok=$((ok + 1)) || fail "$what: rank $r: $(cat "$WORK/out$r")"
  done
  ((ok == n)) && pass "$what: every rank exits 2 and says '$needle'"
}
base=(--preset tiny --synthetic_data --max_steps 2)
expect_error "unknown flag" "hiden_width" 2 "${base[@]}" --hiden_width 64
expect_error "hidden % heads" "not divisible by --num_heads" 2 "${base[@]}" --hidden_width 66
expect_error "heads % kv heads" "--num_key_value_heads" 2 "${base[@]}" --num_key_value_heads 3
expect_error "no data at all" "--dataset" 2 --preset tiny --max_steps 2
expect_error "missing dataset" "$WORK/nowhere" 2 --preset tiny --max_steps 2 --dataset "$WORK/nowhere"
expect_error "bad number" "--max_steps" 2 "${base[@]}" --max_steps lots
expect_error "negative thread count" "--num_threads -1: expected 0" 2 "${base[@]}" --num_threads -1
expect_error "two data sources" "--dataset and --synthetic_data exclude each other" 2 "${base[@]}" \
  --dataset "$WORK/nowhere"
expect_error "negative readahead" "--data_readahead -3" 2 "${base[@]}" --data_readahead -3
# A preference data set trains DPO, its pairs' documents masked from each other.
python3 "$(dirname "$0")/token_data.py" "$WORK/pairs" --vocab 512 --train 300 --validation 100 \
  --preference
expect_error "pairs without document masking" "trains with --document_masking 1" 2 \
  --preset tiny --max_steps 2 --dataset "$WORK/pairs" --document_masking 0
expect_error "a bad DPO loss type" "--dpo_loss 'foo': expected sigmoid, robust, hinge or ipo" 2 \
  --preset tiny --max_steps 2 --dataset "$WORK/pairs" --dpo_loss foo
expect_error "start fresh without auto" "--start_fresh_if_unloadable applies to" 2 "${base[@]}" \
  --start_fresh_if_unloadable

# A world that does not fit hybrid sharding: 3 ranks, 2 per node.
set +e
for r in 0 1 2; do
  RANK=$r WORLD_SIZE=3 LOCAL_RANK=$((r % 2)) LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=29731 timeout 60 "$WIREUP_TRAIN" "${base[@]}" --sharding_strategy hybrid \
    >"$WORK/h$r" 2>&1 &
done
codes=()
for job in $(jobs -p); do wait "$job"; codes+=($?); done
set -e
[[ ${codes[*]} == "2 2 2" ]] && pass "hybrid misfit: all ranks exit 2" || fail "hybrid misfit exit codes: ${codes[*]}"
grep -q "not a multiple of the local world size" "$WORK/h1" && pass "hybrid misfit message" ||
  fail "hybrid misfit message: $(cat "$WORK/h1")"

# Started by a multi-task srun step without --wireup: say so instead of training alone.
set +e
out=$(env -u RANK SLURM_STEP_NUM_TASKS=4 SLURM_PROCID=2 "$WIREUP_TRAIN" "${base[@]}" 2>&1); rc=$?
set -e
((rc == 2)) && [[ $out == *"add --wireup"* ]] && pass "srun without --wireup explained" ||
  fail "srun without --wireup: rc $rc: $out"
finish
