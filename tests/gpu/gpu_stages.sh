# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # the variables come from (and go back to) gpu_check.sh
# The stages of tests/gpu/gpu_check.sh (sourced by it: $train, $build, $out, $py, $src, $big,
# $datasheet, note, losses, same_losses, mean_after and ratio come from there).

# ---- nccl: the communicator, and one whose peer never arrives --------------------------
stage_nccl() {
  if "$build/trainer/wireup-train-nccl-check" --run >"$out/nccl.log" 2>&1; then
    note "PASS: NCCL collectives through a non-blocking communicator ($(tail -1 "$out/nccl.log"))"
  else
    note "FAIL: NCCL collectives:"; tail -20 "$out/nccl.log"; fail=1
  fi
  # Rank 0 of 2, rank 1 never started: the init is aborted after --comm_init_timeout.
  local t0=$SECONDS rc=0
  WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29671 \
    timeout 120 "$train" --preset tiny --synthetic_data --device cuda --max_steps 5 \
    --comm_init_timeout 15 >"$out/nccl_stall.log" 2>&1 || rc=$?
  local took=$((SECONDS - t0))
  if ((rc == 3 && took <= 45)) && grep -q "not arrived: rank 1" "$out/nccl_stall.log"; then
    note "PASS: NCCL init without its second rank ends in $took s (--comm_init_timeout 15), exit 3:" \
         "$(grep -m1 'peer stalled' "$out/nccl_stall.log")"
  else
    note "FAIL: NCCL init without its second rank: exit $rc after $took s:"
    tail -5 "$out/nccl_stall.log"; fail=1
  fi
}

# ---- correct: fp32 on CUDA against the CPU ------------------------------------------
stage_correct() {
  local common=(--preset tiny --synthetic_data --seed 7 --max_steps 12 --logging_freq 1 --lr 1e-3
                --warmup_steps 2 --train_batch_size 4)
  local l3=(--tie_word_embeddings 1 --rope_scaling "llama3:8,1,4,64")
  "$train" "${common[@]}" "${l3[@]}" --device cpu >"$out/l3_cpu.log" 2>&1 || { note "FAIL: cpu run"; fail=1; }
  "$train" "${common[@]}" "${l3[@]}" --device cuda >"$out/l3_cuda.log" 2>&1 || { note "FAIL: cuda run"; fail=1; }
  same_losses "$out/l3_cpu.log" "$out/l3_cuda.log" "$out/l3_pairs.txt" 1e-3 \
    "tied + rope-scaled fp32 loss on CUDA matches CPU over 12 steps (rel 1e-3)" \
    "tied + rope-scaled CPU vs CUDA losses differ"
  # Recomputing each block in backward, without prefetching: the same kernels on the same inputs.
  "$train" "${common[@]}" "${l3[@]}" --device cuda --activation_checkpointing 1 --prefetch 0 \
    >"$out/l3_cuda_recompute.log" 2>&1 || { note "FAIL: cuda recompute run"; fail=1; }
  same_losses "$out/l3_cuda.log" "$out/l3_cuda_recompute.log" "$out/recompute_pairs.txt" 1e-5 \
    "activation checkpointing on CUDA gives the same losses (rel 1e-5)" \
    "activation checkpointing changes the losses"
}

# ---- throughput: wireup-train (bf16, float8) against eager and compiled PyTorch ----------
# perf_ours NAME PRESET BATCH [FLAGS]: 8 steps of synthetic data at sequence 2048; steps
# 3-8 averaged. MFU against the measured GEMM peak (the [mfu] line) and the datasheet's.
perf_ours() {
  local name=$1 preset=$2 batch=$3; shift 3
  timeout 300 "$train" --preset "$preset" --max_context_width 2048 --train_batch_size "$batch" \
    --synthetic_data --max_steps 8 --logging_freq 1 --device cuda --bf16 1 "$@" \
    >"$out/perf_$name.log" 2>&1 || { note "FAIL: $name run"; fail=1; }
  local tps mfu peak mem
  tps=$(mean_after "$out/perf_$name.log" tokens_per_s 2)
  mfu=$(mean_after "$out/perf_$name.log" mfu 2)
  peak=$(sed -n 's/^\[mfu\] peak=\([0-9.e+]*\) TFLOP.*/\1/p' "$out/perf_$name.log" | head -1)
  mem=$(sed -n 's/^\[summary\].* peak_mem_mib=\([0-9.]*\) .*/\1/p' "$out/perf_$name.log")
  local mfu_ds
  mfu_ds=$(awk -v m="${mfu:-0}" -v p="${peak:-0}" -v d="$datasheet" \
    'BEGIN { if (d > 0) printf "%.3f", m * p / d; else print "?" }')
  echo "$name tokens_per_s=${tps:-?} mfu_measured_peak=${mfu:-?} measured_peak_tflops=${peak:-?}" \
       "mfu_datasheet=$mfu_ds peak_mem_mib=${mem:-?}" >>"$out/throughput.txt"
  eval "tps_$name=${tps:-0}"
}
# perf_peer NAME HIDDEN LAYERS HEADS BATCH [--compile]: bench/trainer/llama_eager.py.
perf_peer() {
  local name=$1 hidden=$2 layers=$3 heads=$4 batch=$5; shift 5
  timeout 240 "$py" "$src/bench/trainer/llama_eager.py" --device cuda --bf16 --hidden "$hidden" \
    --layers "$layers" --heads "$heads" --kv_heads 8 --intermediate 8192 --vocab 128256 \
    --seq 2048 --batch "$batch" --rope_theta 500000 --tie --warmup 2 --steps 5 "$@" \
    >"$out/perf_$name.log" 2>&1 || { note "FAIL: $name run (perf_$name.log)"; fail=1; }
  local tps
  tps=$(grep -o ' tokens_per_s=[0-9.]*' "$out/perf_$name.log" | head -1 | cut -d= -f2)
  echo "$name tokens_per_s=${tps:-?}" >>"$out/throughput.txt"
  eval "tps_$name=${tps:-0}"
}
stage_throughput() {
  local b3=2 b1=4
  ((big)) && b3=4 && b1=8
  perf_ours 3b_bf16 llama3.2-3b "$b3"
  perf_ours 3b_f8t llama3.2-3b "$b3" --float8 tensorwise
  perf_ours 3b_f8r llama3.2-3b "$b3" --float8 rowwise
  perf_peer 3b_eager 3072 28 24 "$b3"
  perf_peer 3b_compiled 3072 28 24 "$b3" --compile
  perf_ours 1b_bf16 llama3.2-1b "$b1"
  perf_ours 1b_f8t llama3.2-1b "$b1" --float8 tensorwise
  perf_peer 1b_eager 2048 16 32 "$b1"
  perf_peer 1b_compiled 2048 16 32 "$b1" --compile
  # shellcheck disable=SC2154 # set through eval by perf_ours/perf_peer
  {
    echo "3b (batch $b3): bf16/eager $(ratio "$tps_3b_bf16" "$tps_3b_eager")" \
         "bf16/compiled $(ratio "$tps_3b_bf16" "$tps_3b_compiled")" \
         "f8-tensorwise/bf16 $(ratio "$tps_3b_f8t" "$tps_3b_bf16")" \
         "f8-rowwise/bf16 $(ratio "$tps_3b_f8r" "$tps_3b_bf16")" \
         "f8-tensorwise/compiled $(ratio "$tps_3b_f8t" "$tps_3b_compiled")"
    echo "1b (batch $b1): bf16/eager $(ratio "$tps_1b_bf16" "$tps_1b_eager")" \
         "bf16/compiled $(ratio "$tps_1b_bf16" "$tps_1b_compiled")" \
         "f8-tensorwise/bf16 $(ratio "$tps_1b_f8t" "$tps_1b_bf16")"
  } >>"$out/throughput.txt"
  note "throughput on $gpu (sequence 2048, tokens/s; datasheet peak $datasheet TFLOP/s):"
  tee -a "$out/summary.txt" <"$out/throughput.txt"
}

# ---- float8perf: the 3B shape's bf16 and float8 steps only (no peers) ----------------------
stage_float8perf() {
  local b3=2
  ((big)) && b3=4
  perf_ours 3b_bf16 llama3.2-3b "$b3"
  perf_ours 3b_f8t llama3.2-3b "$b3" --float8 tensorwise
  perf_ours 3b_f8r llama3.2-3b "$b3" --float8 rowwise
  # shellcheck disable=SC2154 # set through eval by perf_ours
  echo "3b (batch $b3): f8-tensorwise/bf16 $(ratio "$tps_3b_f8t" "$tps_3b_bf16")" \
       "f8-rowwise/bf16 $(ratio "$tps_3b_f8r" "$tps_3b_bf16")" >>"$out/throughput.txt"
  note "float8 throughput on $gpu (sequence 2048, tokens/s):"
  tee -a "$out/summary.txt" <"$out/throughput.txt"
}

# ---- breakdown: one step's kernel time by phase ---------------------------------------
stage_breakdown() {
  local b3=2
  ((big)) && b3=4
  local run
  for run in "3b_bf16" "3b_f8t --float8 tensorwise"; do
    local name=${run%% *} extra=()
    [[ $run == *" "* ]] && read -ra extra <<<"${run#* }"
    if timeout 240 "$train" breakdown --preset llama3.2-3b --max_context_width 2048 \
         --train_batch_size "$b3" --device cuda --bf16 1 "${extra[@]}" \
         >"$out/breakdown_$name.log" 2>&1; then
      note "breakdown $name:"; grep '^\[breakdown\]' "$out/breakdown_$name.log" | tee -a "$out/summary.txt"
    else
      note "FAIL: breakdown $name:"; tail -5 "$out/breakdown_$name.log"; fail=1
    fi
  done
}

# ---- float8loss: float8 learns the demo corpus as bf16 does ------------------------------
stage_float8loss() {
  [[ -n ${CORPUS:-} ]] || { note "SKIP: float8loss (set CORPUS)"; return; }
  local common=(--preset llama3.2-1b --max_context_width 1024 --train_batch_size 4
                --dataset "$CORPUS" --seed 7 --max_steps 200 --lr 3e-4 --warmup_steps 20
                --logging_freq 10 --device cuda --bf16 1)
  local r recipes=${F8LOSS_RECIPES:-tensorwise rowwise}
  for r in off $recipes; do
    timeout 200 "$train" "${common[@]}" --float8 "$r" >"$out/f8loss_$r.log" 2>&1 ||
      { note "FAIL: float8loss $r run"; fail=1; }
  done
  local base
  base=$(mean_after "$out/f8loss_off.log" loss 150)
  for r in $recipes; do
    local got
    got=$(mean_after "$out/f8loss_$r.log" loss 150)
    if awk -v a="${got:-0}" -v b="${base:-0}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && a > 0 && d < 0.01 * b) }'; then
      note "PASS: float8 $r loss over steps 160-200 $got, bf16 $base (within 1%)"
    else
      note "FAIL: float8 $r loss over steps 160-200 ${got:-?}, bf16 ${base:-?} (not within 1%)"; fail=1
    fi
  done
}

# ---- learn: bf16 learns real text ------------------------------------------------
stage_learn() {
  [[ -n ${CORPUS:-} ]] || { note "SKIP: learn (set CORPUS)"; return; }
  local learn=(--preset tiny --vocab_size 1000 --max_context_width 128 --dataset "$CORPUS" --seed 7
               --max_steps 100 --train_batch_size 8 --lr 3e-3 --warmup_steps 10 --min_lr 3e-4
               --logging_freq 10 --device cuda)
  "$train" "${learn[@]}" --bf16 1 >"$out/bf16_cuda.log" 2>&1 || { note "FAIL: cuda bf16 run"; fail=1; }
  "$train" "${learn[@]}" >"$out/fp32_learn_cuda.log" 2>&1 || { note "FAIL: cuda fp32 run"; fail=1; }
  local first final final32
  first=$(sed -n 's/.*first_loss=\([0-9.]*\).*/\1/p' "$out/bf16_cuda.log")
  final=$(sed -n 's/.*final_loss=\([0-9.]*\).*/\1/p' "$out/bf16_cuda.log")
  final32=$(sed -n 's/.*final_loss=\([0-9.]*\).*/\1/p' "$out/fp32_learn_cuda.log")
  if awk -v f="$first" -v l="$final" -v l32="$final32" \
       'BEGIN { d = l - l32; if (d < 0) d = -d; exit !(f > 6.5 && l < 0.8 * f && d < 0.05 * l32) }'; then
    note "PASS: bf16 on CUDA learns: loss $first -> $final (fp32: $final32)"
  else
    note "FAIL: bf16 on CUDA: loss $first -> $final, fp32 reached $final32"; fail=1
  fi
}

# ---- checkpoint: CUDA state saved asynchronously, resumed -------------------------------
stage_checkpoint() {
  local ck=(--preset tiny --synthetic_data --seed 7 --max_steps 20 --logging_freq 1 --device cuda)
  rm -rf "$build/ckpt"
  "$train" "${ck[@]}" >"$out/ckpt_straight.log" 2>&1 || { note "FAIL: straight run"; fail=1; }
  "$train" "${ck[@]}" --checkpoint_dir "$build/ckpt" --stop_after_step 10 --async_checkpointing 1 \
    >"$out/ckpt_first.log" 2>&1 || { note "FAIL: run to the checkpoint"; fail=1; }
  "$train" "${ck[@]}" --checkpoint_dir "$build/ckpt" --resume_from_checkpoint auto \
    >"$out/ckpt_resumed.log" 2>&1 || { note "FAIL: resumed run"; fail=1; }
  awk 'NR == FNR { s[$1] = $2; next } ($1 in s) { print $1, s[$1], $2 }' \
    <(losses "$out/ckpt_straight.log") <(losses "$out/ckpt_resumed.log") >"$out/ckpt_pairs.txt"
  if awk 'BEGIN{bad=0; n=0} {n++; d=$2-$3; if (d<0) d=-d; if (d > 1e-4*$2) bad=1} END{exit (bad || n!=10)}' \
       "$out/ckpt_pairs.txt"; then
    note "PASS: CUDA checkpoint at step 10, resumed: steps 11-20 match the uninterrupted run"
  else
    note "FAIL: resumed losses differ (step straight resumed):"; cat "$out/ckpt_pairs.txt"; fail=1
  fi
}
