#!/usr/bin/env bash
# wireup-train's GPU path on a real GPU node, by hand (CI has no GPU; there
# the NCCL backend is only compiled and linked). Builds wireup-train against
# a CUDA LibTorch and NCCL, then checks what CPU runs cannot:
#   1. one tiny model, one seed, fp32 on CPU and on CUDA: the loss sequences agree, also
#      with tied embeddings and Llama 3.1 rope scaling,
#      (the CUDA path computes with ATen's ops where the CPU path has its own kernels),
#      and again with activation checkpointing and no prefetch: the same losses;
#   2. bf16 compute on CUDA learns real text as far as fp32 does;
#   3. the NCCL communicator itself (ncclCommInitRank through the TCPStore, one rank):
#      gathers, reduce-scatters, all-reduces and broadcasts give the right values;
#   4. tokens/s and MFU of Llama 3.2 1B's shape (tied, rope-scaled) in bf16 against PyTorch
#      eager on the same GPU;
#   5. a checkpoint of CUDA state (asynchronous), resumed, continues the run exactly.
# Usage: tests/gpu/gpu_check.sh OUT_DIR
# Env: TORCH_PREFIX  CMake prefix of a CUDA LibTorch (default: python3's torch)
#      NCCL_HOME     folder with include/nccl.h and lib/libnccl.so* (default: the CUDA
#                    toolkit's, else python3's nvidia-nccl wheel)
#      EXTRA_PREFIX  more CMAKE_PREFIX_PATH entries (CLI11, nlohmann_json)
#      CORPUS        a demo corpus (data/prep/demo-corpus.sh --vocab-size 1000 DIR)
#                    for the bf16 learning check
set -uo pipefail
out=${1:?usage: gpu_check.sh OUT_DIR}
mkdir -p "$out"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${WIREUP_GPU_BUILD:-/tmp/wireup-gpu-build}
py=${PYTHON:-python3}
fail=0
note() { echo "== $*" | tee -a "$out/summary.txt"; }

torch_prefix=${TORCH_PREFIX:-$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ -z ${NCCL_HOME:-} ]]; then
  if [[ -f $cuda_home/include/nccl.h ]]; then NCCL_HOME=$cuda_home
  else NCCL_HOME=$($py -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null); fi
fi
nccl_lib=$(find "$NCCL_HOME"/lib* -maxdepth 1 -name "libnccl.so*" 2>/dev/null | sort | head -1)
note "torch: $torch_prefix; NCCL: $NCCL_HOME ($nccl_lib); GPU: $(nvidia-smi -L 2>&1 | head -1)"

# ---- build -----------------------------------------------------------------
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DWIREUP_BUILD_SPANK=OFF -DWIREUP_BUILD_LAUNCHER=OFF \
  -DCMAKE_PREFIX_PATH="$torch_prefix;${EXTRA_PREFIX:-}" -DCUDAToolkit_ROOT="$cuda_home" \
  -DWIREUP_CUDA_HOME="$cuda_home" -DWIREUP_TRAIN_NCCL_INCLUDE="$NCCL_HOME/include" \
  -DWIREUP_TRAIN_NCCL_LIB="$nccl_lib" >"$out/configure.log" 2>&1 ||
  { note "FAIL: configure (configure.log)"; exit 1; }
grep -E "^-- wireup" "$out/configure.log" | tee -a "$out/summary.txt"
ninja -C "$build" -k 0 wireup-train wireup-train-nccl-check >"$out/build.log" 2>&1 ||
  { note "FAIL: build (build.log)"; grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
train=$build/trainer/wireup-train
LD_LIBRARY_PATH="$(dirname "$nccl_lib"):${LD_LIBRARY_PATH:-}"
export LD_LIBRARY_PATH

losses() { sed -n 's/^\[train\] step=\([0-9]*\)\/[0-9]* loss=\([0-9.naife+-]*\) .*/\1 \2/p' "$1"; }
# same_losses A.log B.log PAIRS REL PASS_TEXT FAIL_TEXT: the two runs logged the same 12 or
# more steps, each loss within REL (relative) of the other's; PAIRS keeps "step a step b".
same_losses() {
  paste <(losses "$1") <(losses "$2") >"$3"
  if awk -v rel="$4" 'BEGIN{bad=0; n=0} {n++; d=$2-$4; if (d<0) d=-d;
          if (d > rel*($2<0?-$2:$2) || $1!=$3) bad=1} END{exit (bad || n<12)}' "$3"; then
    note "PASS: $5"
  else
    note "FAIL: $6:"; cat "$3"; fail=1
  fi
}

# ---- 1. fp32: CPU and CUDA agree ------------------------------------------------
common=(--preset tiny --synthetic_data --seed 7 --max_steps 12 --logging_freq 1 --lr 1e-3
        --warmup_steps 2 --train_batch_size 4)
"$train" "${common[@]}" --device cpu >"$out/fp32_cpu.log" 2>&1 || { note "FAIL: cpu run"; fail=1; }
"$train" "${common[@]}" --device cuda >"$out/fp32_cuda.log" 2>&1 || { note "FAIL: cuda fp32 run"; fail=1; }
same_losses "$out/fp32_cpu.log" "$out/fp32_cuda.log" "$out/fp32_pairs.txt" 1e-3 \
  "fp32 loss on CUDA matches CPU over 12 steps (rel 1e-3)" "fp32 CPU vs CUDA losses differ"
# Llama 3.2's features (tied embeddings, llama3 rope scaling) on both paths.
l3=(--tie_word_embeddings 1 --rope_scaling "llama3:8,1,4,64")
"$train" "${common[@]}" "${l3[@]}" --device cpu >"$out/l3_cpu.log" 2>&1 || { note "FAIL: cpu tied run"; fail=1; }
"$train" "${common[@]}" "${l3[@]}" --device cuda >"$out/l3_cuda.log" 2>&1 || { note "FAIL: cuda tied run"; fail=1; }
same_losses "$out/l3_cpu.log" "$out/l3_cuda.log" "$out/l3_pairs.txt" 1e-3 \
  "tied + rope-scaled fp32 loss on CUDA matches CPU over 12 steps (rel 1e-3)" \
  "tied + rope-scaled CPU vs CUDA losses differ"
# The same run recomputing each block in backward, without prefetching: the
# same losses (recompute runs the same kernels on the same inputs).
"$train" "${common[@]}" --device cuda --activation_checkpointing 1 --prefetch 0 \
  >"$out/fp32_cuda_recompute.log" 2>&1 || { note "FAIL: cuda recompute run"; fail=1; }
same_losses "$out/fp32_cuda.log" "$out/fp32_cuda_recompute.log" "$out/recompute_pairs.txt" 1e-5 \
  "activation checkpointing on CUDA gives the same losses (rel 1e-5)" \
  "activation checkpointing changes the losses"

# ---- 2. bf16 learns real text ---------------------------------------------------
# The demo corpus (data/prep/demo-corpus.sh, vocabulary 1000) as in
# tests/trainer/learns.sh; random tokens cannot fall below ln(vocab).
if [[ -n ${CORPUS:-} ]]; then
  learn=(--preset tiny --vocab_size 1000 --max_context_width 128 --dataset "$CORPUS" --seed 7
         --max_steps 100 --train_batch_size 8 --lr 3e-3 --warmup_steps 10 --min_lr 3e-4
         --logging_freq 10 --device cuda)
  "$train" "${learn[@]}" --bf16 1 >"$out/bf16_cuda.log" 2>&1 || { note "FAIL: cuda bf16 run"; fail=1; }
  "$train" "${learn[@]}" >"$out/fp32_learn_cuda.log" 2>&1 || { note "FAIL: cuda fp32 run"; fail=1; }
  first=$(sed -n 's/.*first_loss=\([0-9.]*\).*/\1/p' "$out/bf16_cuda.log")
  final=$(sed -n 's/.*final_loss=\([0-9.]*\).*/\1/p' "$out/bf16_cuda.log")
  final32=$(sed -n 's/.*final_loss=\([0-9.]*\).*/\1/p' "$out/fp32_learn_cuda.log")
  if awk -v f="$first" -v l="$final" -v l32="$final32" \
       'BEGIN { d = l - l32; if (d < 0) d = -d; exit !(f > 6.5 && l < 0.8 * f && d < 0.05 * l32) }'; then
    note "PASS: bf16 on CUDA learns: loss $first -> $final (fp32: $final32)"
  else
    note "FAIL: bf16 on CUDA: loss $first -> $final, fp32 reached $final32"; fail=1
  fi
else
  note "SKIP: bf16 learning check (set CORPUS to a demo-corpus.sh output)"
fi

# ---- 3. NCCL communicator ------------------------------------------------------
if "$build/trainer/wireup-train-nccl-check" --run >"$out/nccl.log" 2>&1; then
  note "PASS: NCCL collectives ($(tail -1 "$out/nccl.log"))"
else
  note "FAIL: NCCL collectives:"; tail -20 "$out/nccl.log"; fail=1
fi

# ---- 4. throughput against PyTorch eager on the same GPU ------------------------------
# Llama 3.2 1B's shape (tied embeddings, vocabulary 128256, rope scaling), sequence 2048,
# batch 8 on GPUs with 100 GiB or more (H200), else 4 (the eager peer's fp32 logits do not
# fit batch 8 in an H100's 80 GB), bf16 over fp32 master weights on both sides (the peer:
# bench/trainer/llama_eager.py --tie, autocast + SDPA + AdamW). Steps after the first two
# are averaged. MFU against the dense bf16 peak where known (--peak_tflops), else measured.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
batch=4
((${gpu_mib:-0} >= 102400)) && batch=8
peak=()
case $gpu in
  *H100*|*H200*) peak=(--peak_tflops 989.4) ;;
  *A100*) peak=(--peak_tflops 312) ;;
esac
"$train" --preset llama3.2-1b --max_context_width 2048 --train_batch_size "$batch" "${peak[@]}" \
  --synthetic_data --max_steps 12 --logging_freq 1 --device cuda --bf16 1 \
  >"$out/perf_cuda.log" 2>&1 || { note "FAIL: throughput run"; fail=1; }
$py "$src/bench/trainer/llama_eager.py" --device cuda --bf16 --hidden 2048 --layers 16 --heads 32 \
  --kv_heads 8 --intermediate 8192 --vocab 128256 --seq 2048 --batch "$batch" --rope_theta 500000 --tie \
  --warmup 2 --steps 10 >"$out/perf_eager.log" 2>&1 || { note "FAIL: eager peer run"; fail=1; }
ours=$(sed -n 's/^\[train\] step=\([0-9]*\)\/.* tokens_per_s=\([0-9.]*\) .*/\1 \2/p' "$out/perf_cuda.log" |
       awk '$1 > 2 {s += $2; n++} END {if (n) printf "%.1f", s / n}')
mfu=$(sed -n 's/^\[train\] step=12\/.* mfu=\([0-9.]*\) .*/\1/p' "$out/perf_cuda.log")
mem=$(sed -n 's/^\[summary\].* peak_mem_mib=\([0-9.]*\) .*/\1/p' "$out/perf_cuda.log")
peer=$(grep -o ' tokens_per_s=[0-9.]*' "$out/perf_eager.log" | head -1 | cut -d= -f2)
note "throughput on $gpu (llama3.2-1b shape, seq 2048, batch $batch, bf16): wireup-train ${ours:-?} tokens/s" \
     "(MFU ${mfu:-?}, $(grep -o 'peak=.*' "$out/perf_cuda.log" | head -1), peak mem ${mem:-?} MiB)," \
     "PyTorch eager ${peer:-?} tokens/s," \
     "ratio $(awk -v a="${ours:-0}" -v b="${peer:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "?" }')"
# ---- 5. checkpoints of CUDA state ------------------------------------------------------
# Stop at step 10 with an asynchronous checkpoint (GPU state through host
# buffers), resume, and reach the losses of an uninterrupted 20-step run.
ck=(--preset tiny --synthetic_data --seed 7 --max_steps 20 --logging_freq 1 --device cuda)
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

exit $fail
