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

# ---- trace: --profile_steps on CUDA, the GPU's side timed by CUDA events ---------------
stage_trace() {
  local dir=$out/trace
  rm -rf "$dir"
  if ! "$train" --preset tiny --synthetic_data --device cuda --max_steps 6 --logging_freq 1 \
       --profile_steps 3:5 --profile_dir "$dir" >"$out/trace.log" 2>&1; then
    note "FAIL: profiled CUDA run (trace.log):"; tail -5 "$out/trace.log"; fail=1; return
  fi
  # tiny: 4 units (embedding, 2 blocks, head); one GPU, so no NCCL communicator.
  if "$py" "$src/tests/gpu/trace_check.py" "$dir/trace-0.json" --units 4 --steps 3:5 \
       >"$out/trace_check.txt" 2>&1 && ! grep -q "GPU's spans are off" "$out/trace.log"; then
    note "PASS: $(cat "$out/trace_check.txt")"
  else
    note "FAIL: the CUDA trace:"; cat "$out/trace_check.txt"; grep '^\[profile\]' "$out/trace.log"
    fail=1
  fi
}

# ---- overhead: what the observability costs a step on CUDA -------------------------------
# bench/trainer/observability_ab.sh on one GPU: this build against itself with a
# --profile_steps window over every timed step (CUDA events, one wait per step);
# with OVERHEAD_BASE_TRAIN (a wireup-train built from an earlier commit), also
# that build against this one without a window (the cost outside it).
stage_overhead() {
  local ab=$src/bench/trainer/observability_ab.sh steps=40
  export WIREUP_BENCH_DEVICE=cuda WIREUP_BENCH_TRAINER_STEPS=$steps
  if WIREUP_BENCH_NEW_ARGS="--profile_steps 2:$((steps + 1)) --profile_dir $out/overhead_trace" \
       bash "$ab" "$train" "$train" 5 >"$out/overhead_window.txt" 2>&1; then
    note "what a --profile_steps window over every timed step costs on $gpu (overhead_window.txt):"
    tail -3 "$out/overhead_window.txt" | tee -a "$out/summary.txt"
  else
    note "FAIL: overhead A/B with a window:"; tail -5 "$out/overhead_window.txt"; fail=1
  fi
  if [[ -n ${OVERHEAD_BASE_TRAIN:-} ]]; then
    if bash "$ab" "$OVERHEAD_BASE_TRAIN" "$train" 5 >"$out/overhead_base.txt" 2>&1; then
      note "this build against $OVERHEAD_BASE_TRAIN on $gpu, no window (overhead_base.txt):"
      tail -3 "$out/overhead_base.txt" | tee -a "$out/summary.txt"
    else
      note "FAIL: overhead A/B against the base:"; tail -5 "$out/overhead_base.txt"; fail=1
    fi
  fi
  unset WIREUP_BENCH_DEVICE WIREUP_BENCH_TRAINER_STEPS
}

# ---- sft: document masking and generate on CUDA -------------------------------------
# The chat set of tests/trainer/sft.sh (token_data.py --chat: packed windows of 64);
# generate needs Llama 3's tokenizer (TOKENIZER), the bench wireup-prep too.
attention_of() { sed -n 's/^\[attention\] document_masking=1 path=//p' "$out/$1" | head -1; }
stage_sft() {
  local data=$build/sft-chat sft_ck=$build/sft-ckpt tok=${TOKENIZER:-$src/.cache/vocab/llama3.tiktoken}
  rm -rf "$data" "$sft_ck"
  "$py" "$src/tests/trainer/token_data.py" "$data" --vocab 512 --train 1200,400 --validation 300 \
    --chat 30 --seed 3 >"$out/sft_data.log" 2>&1 || { note "FAIL: sft data (sft_data.log)"; fail=1; return; }
  local common=(--preset tiny --dataset "$data" --seed 7 --max_steps 12 --epochs 0 --logging_freq 1
                --lr 1e-3 --warmup_steps 2 --train_batch_size 4)
  # (a) fp32: CUDA's document masking (SDPA with a mask) against the CPU's blocked attention.
  "$train" "${common[@]}" --device cpu >"$out/sft_cpu.log" 2>&1 || { note "FAIL: sft cpu run"; fail=1; }
  "$train" "${common[@]}" --device cuda >"$out/sft_cuda.log" 2>&1 || { note "FAIL: sft cuda run"; fail=1; }
  same_losses "$out/sft_cpu.log" "$out/sft_cuda.log" "$out/sft_pairs.txt" 1e-3 \
    "SFT, document masking, fp32 on CUDA ($(attention_of sft_cuda.log)) = CPU over 12 steps (rel 1e-3)" \
    "SFT, document masking: CPU vs CUDA losses differ"
  # (b) bf16: the attention chosen (varlen flash where it runs) against SDPA's mask.
  "$train" "${common[@]}" --device cuda --bf16 1 >"$out/sft_bf16.log" 2>&1 ||
    { note "FAIL: sft bf16 run"; fail=1; }
  WIREUP_DOCUMENT_ATTENTION=mask "$train" "${common[@]}" --device cuda --bf16 1 \
    >"$out/sft_bf16_mask.log" 2>&1 || { note "FAIL: sft bf16 mask run"; fail=1; }
  note "sft bf16 attention: $(grep -m1 '^\[attention\]' "$out/sft_bf16.log")"
  same_losses "$out/sft_bf16_mask.log" "$out/sft_bf16.log" "$out/sft_bf16_pairs.txt" 2e-2 \
    "SFT bf16: $(attention_of sft_bf16.log) = $(attention_of sft_bf16_mask.log) over 12 steps (rel 2e-2)" \
    "SFT bf16: $(attention_of sft_bf16.log) vs $(attention_of sft_bf16_mask.log) losses differ"
  # (c) generate: a checkpoint trained on CUDA, greedy on the CPU and on CUDA.
  if [[ ! -f $tok ]]; then note "SKIP: sft generate and bench (no $tok; set TOKENIZER)"; return; fi
  "$train" "${common[@]}" --vocab_size 128256 --max_steps 40 --lr 3e-3 --device cuda \
    --checkpoint_dir "$sft_ck" >"$out/sft_ckpt.log" 2>&1 || { note "FAIL: sft checkpoint run"; fail=1; }
  printf '%s\n' '{"prompt": "Hello"}' '{"prompt": "1, 2, 3,"}' '{"prompt": "The end"}' >"$out/sft_prompts.jsonl"
  local d dev dt
  for d in "cpu float32" "cuda float32" "cuda bfloat16"; do
    read -r dev dt <<<"$d"
    "$train" generate --resume_from_checkpoint "$sft_ck" --tokenizer "$tok" --prompts "$out/sft_prompts.jsonl" \
      --max_new_tokens 16 --show_ids --device "$dev" --dtype "$dt" >"$out/gen_${dev}_$dt.jsonl" 2>"$out/gen_${dev}_$dt.err" ||
      { note "FAIL: generate --device $dev --dtype $dt:"; tail -3 "$out/gen_${dev}_$dt.err"; fail=1; }
  done
  if [[ -s $out/gen_cpu_float32.jsonl ]] && cmp -s "$out/gen_cpu_float32.jsonl" "$out/gen_cuda_float32.jsonl"; then
    note "PASS: generate on CUDA (fp32, KV cache on the GPU) = CPU: the same greedy ids for 3 prompts"
  else
    note "FAIL: generate on CUDA differs from the CPU:"; cat "$out/gen_cpu_float32.jsonl" "$out/gen_cuda_float32.jsonl"; fail=1
  fi
  note "generate --dtype bfloat16 on CUDA: $(cmp -s "$out/gen_cpu_float32.jsonl" "$out/gen_cuda_bfloat16.jsonl" &&
    echo "the same ids as fp32" || echo "ids differ from fp32 (not required)"); $(tail -1 "$out/gen_cuda_bfloat16.err")"
  # (d) tokens/s: document masking (varlen flash, and SDPA's mask) against plain causal.
  if ninja -C "$build" wireup-prep >"$out/sft_prep_build.log" 2>&1; then
    WIREUP_BENCH_SFT_DEVICE=cuda WIREUP_VOCAB_DIR=$(dirname "$tok") timeout 300 \
      bash "$src/bench/trainer/sft_bench.sh" "$build" "$out/sft_bench.md" "${SFT_BENCH_REPS:-1}" \
      >"$out/sft_bench.log" 2>&1 || { note "FAIL: sft_bench (sft_bench.log)"; tail -5 "$out/sft_bench.log"; fail=1; }
    note "sft_bench on $gpu:"; grep -E '^\||Document masking|Forced' "$out/sft_bench.md" | tee -a "$out/summary.txt"
  else
    note "SKIP: sft_bench (wireup-prep did not build: sft_prep_build.log)"
  fi
}
