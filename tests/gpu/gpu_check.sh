#!/usr/bin/env bash
# shellcheck disable=SC2317 # the stage functions (gpu_stages.sh) are called as "stage_$s"
# wireup-train's GPU path on a real GPU node, by hand (CI has no GPU; there
# the NCCL backend is only compiled and linked). Builds wireup-train against
# a CUDA LibTorch and NCCL, then runs these stages (docs/gpu.md):
#   nccl        the NCCL communicator (ncclCommInitRank through the TCPStore, one rank):
#               gathers, reduce-scatters, all-reduces, broadcasts give the right values;
#               and a 2-rank communicator whose second rank never arrives ends within
#               --comm_init_timeout with exit status 3, naming rank 1;
#   correct     one tiny model, one seed, fp32 on CPU and on CUDA: the loss sequences agree,
#               also with tied embeddings and Llama 3.1 rope scaling, and with activation
#               checkpointing and no prefetch;
#   sft         SFT with document masking: fp32 on CUDA = CPU; bf16 varlen flash = bf16
#               with the mask (WIREUP_DOCUMENT_ATTENTION=mask); generate's greedy ids on
#               CUDA = CPU (needs TOKENIZER); sft_bench.sh on CUDA: masked/causal tokens/s;
#   throughput  tokens/s and MFU at Llama 3.2 3B's and 1B's shapes (tied, rope-scaled,
#               sequence 2048) in bf16 and in float8 (tensorwise, rowwise), against PyTorch
#               eager and torch.compile on the same GPU; the measured GEMM peak beside the
#               datasheet's;
#   float8perf  the 3B shape's bf16 and float8 tokens/s only (no peers: a quick rerun);
#   breakdown   one step's CUDA kernel time by phase (wireup-train breakdown), bf16 and float8;
#   float8loss  200 steps of the demo corpus at the 1B shape: float8's loss within 1% of bf16's;
#   learn       bf16 on CUDA learns real text as far as fp32 does;
#   checkpoint  a checkpoint of CUDA state (asynchronous), resumed, continues the run exactly;
#   trace       --profile_steps 3:5 on CUDA: trace-0.json holds every unit's forward and
#               backward on the track "cuda compute" (CUDA events), each inside its step's
#               host span, lasting more than 0 (tests/gpu/trace_check.py);
#   overhead    bench/trainer/observability_ab.sh on the GPU: what a --profile_steps window
#               costs a step (this build against itself; with OVERHEAD_BASE_TRAIN, a build of
#               an earlier commit, also the cost outside a window).
# Usage: tests/gpu/gpu_check.sh OUT_DIR
# Env: TORCH_PREFIX  CMake prefix of a CUDA LibTorch (default: python3's torch)
#      NCCL_HOME     folder with include/nccl.h and lib/libnccl.so* (default: the CUDA
#                    toolkit's, else python3's nvidia-nccl wheel)
#      EXTRA_PREFIX  more CMAKE_PREFIX_PATH entries (CLI11, nlohmann_json)
#      CORPUS        a demo corpus (data/prep/demo-corpus.sh --vocab-size 1000 DIR) for
#                    float8loss and learn (skipped without it)
#      TOKENIZER     Llama 3's tokenizer.model for sft's generate and bench (default
#                    .cache/vocab/llama3.tiktoken; skipped without it)
#      SFT_BENCH_REPS  interleaved runs of each side in sft's bench (default 1)
#      STAGES        the stages to run, in this order (default: all of the above but
#                    float8perf)
#      OVERHEAD_BASE_TRAIN  a wireup-train of an earlier commit for overhead (optional)
#      F8LOSS_RECIPES  the float8 recipes float8loss trains (default: tensorwise rowwise)
#      BUDGET_S      start no stage later than this many seconds after the script started,
#                    the build included (default: no limit)
set -uo pipefail
out=${1:?usage: gpu_check.sh OUT_DIR}
mkdir -p "$out"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${WIREUP_GPU_BUILD:-/tmp/wireup-gpu-build}
py=${PYTHON:-python3}
stages=${STAGES:-nccl correct sft throughput breakdown float8loss learn checkpoint trace overhead}
budget=${BUDGET_S:-0}
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

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
big=0; ((${gpu_mib:-0} >= 102400)) && big=1  # H200 (141 GB) against H100 (80 GB)
datasheet=0
case $gpu in *H100*|*H200*) datasheet=989.4 ;; *A100*) datasheet=312 ;; esac

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
# mean_after LOG FIELD FIRST: the mean of FIELD over the [train] lines of steps after FIRST.
mean_after() {
  sed -n "s/^\[train\] step=\([0-9]*\)\/.* $2=\([0-9.e+-]*\) .*/\1 \2/p" "$1" |
    awk -v f="$3" '$1 > f {s += $2; n++} END {if (n) printf "%.4g", s / n}'
}
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "?" }'; }

# shellcheck source=tests/gpu/gpu_stages.sh
. "$src/tests/gpu/gpu_stages.sh"

t_start=$SECONDS
for s in $stages; do
  if ((budget > 0 && SECONDS > budget)); then note "SKIP: $s (BUDGET_S=$budget spent)"; continue; fi
  note "stage $s ($((SECONDS - t_start)) s in)"
  "stage_$s"
done
note "done: build $t_start s, stages $((SECONDS - t_start)) s"
exit $fail
