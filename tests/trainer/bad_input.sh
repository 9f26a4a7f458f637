#!/usr/bin/env bash
# Bad input: a clear error on every rank before any collective, exit 2, no hang.
source "$(dirname "$0")/lib.sh"

# expect_error DESCRIPTION NEEDLE NPROC ARGS...
expect_error() {
  local what=$1 needle=$2 n=$3
  shift 3
  set +e
  out=$(timeout 60 "$WIREUP_LAUNCH" --standalone --nproc-per-node="$n" -- "$WIREUP_TRAIN" "$@" 2>&1)
  rc=$?
  set -e
  if ((rc == 124)); then fail "$what: hung"; return; fi
  ((rc != 0)) && pass "$what: exit $rc" || fail "$what: exit 0"
  [[ $out == *"$needle"* ]] && pass "$what: says '$needle'" || fail "$what: no '$needle' in: $out"
  local ranks
  ranks=$(grep -o "wireup-train\[rank [0-9]*\]: error" <<<"$out" | sort -u | wc -l)
  ((ranks == n)) && pass "$what: every rank reports it" || fail "$what: $ranks of $n ranks reported"
}
base=(--preset tiny --synthetic_data --max_steps 2)
expect_error "unknown flag" "hiden_width" 2 "${base[@]}" --hiden_width 64
expect_error "hidden % heads" "not divisible by --num_heads" 2 "${base[@]}" --hidden_width 66
expect_error "heads % kv heads" "--num_key_value_heads" 2 "${base[@]}" --num_key_value_heads 3
expect_error "no data at all" "--dataset" 2 --preset tiny --max_steps 2
expect_error "missing dataset" "$WORK/nowhere" 2 --preset tiny --max_steps 2 --dataset "$WORK/nowhere"
expect_error "bad number" "--max_steps" 2 "${base[@]}" --max_steps lots

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
