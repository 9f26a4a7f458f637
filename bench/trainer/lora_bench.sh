#!/usr/bin/env bash
# LoRA's memory against a full fine-tune, wireup-train and its PyTorch eager peer side by
# side (llama_eager.py: the same Llama, PEFT's LoRA layer on the seven projections with
# --lora_rank), one rank on the CPU, fp32, one thread, at a 0.23B shape where the
# weights dominate (1 sequence of 64 tokens a step): each run's peak resident set after
# two optimizer steps, in bytes per model parameter; LoRA over full for each, and wireup
# over eager for each. wireup's LoRA run starts from a Hugging Face export of the same
# shape (--init_from_hf, as a LoRA run must); the others from random weights.
# Writes a Markdown section to OUT.
# Usage: lora_bench.sh BUILD_DIR OUT.md
# Environment: WIREUP_BENCH_LORA_RANK (16).
set -euo pipefail
build=$1 out=$2
rank=${WIREUP_BENCH_LORA_RANK:-16}
here=$(cd "$(dirname "$0")" && pwd)
train=$build/trainer/wireup-train
py=/usr/bin/python3   # Debian's python3-torch
[[ -x $train ]] || { echo "no $train: build first" >&2; exit 1; }
dir=$(mktemp -d /tmp/wireup-bench-lora.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1

shape=(--hidden_width 1024 --num_layers 14 --num_heads 16 --num_key_value_heads 8
  --intermediate_size 2816 --vocab_size 32000 --max_context_width 64)
peer_shape=(--hidden 1024 --layers 14 --heads 16 --kv_heads 8 --intermediate 2816 --vocab 32000
  --seq 64)
common=(--synthetic_data --num_threads 1 --train_batch_size 1 --max_steps 2)
lora=(--lora_rank "$rank" --lora_alpha "$((2 * rank))")
run() {  # OUT CMD...
  local o=$1; shift
  timeout 900 "$@" >"$o" 2>&1 || { echo "failed: $*" >&2; tail -20 "$o" >&2; return 1; }
}
field() {  # FILE TAG KEY
  awk -v tag="$2" -v key="$3" 'index($0, tag) == 1 {
      for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) { print substr($i, length(key) + 2); exit } }' "$1"
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

echo "bench lora: full and LoRA (rank $rank), wireup-train and eager PyTorch, 0.23B shape" >&2
run "$dir/full" "$train" "${shape[@]}" "${common[@]}"
# The base LoRA adapts: the same shape's weights as a Hugging Face directory.
run "$dir/base-ck" "$train" "${shape[@]}" "${common[@]}" --max_steps 1 --checkpoint_dir "$dir/ck"
run "$dir/export" "$train" export --checkpoint "$dir/ck" --out "$dir/base"
rm -rf "$dir/ck"
run "$dir/lora" "$train" --init_from_hf "$dir/base" --max_context_width 64 "${common[@]}" "${lora[@]}"
run "$dir/efull" "$py" "$here/llama_eager.py" "${peer_shape[@]}" --batch 1 --warmup 1 --steps 1
run "$dir/elora" "$py" "$here/llama_eager.py" "${peer_shape[@]}" --batch 1 --warmup 1 --steps 1 \
  --lora_rank "$rank" --lora_alpha "$((2 * rank))"

P=$(field "$dir/full" '[config]' params)
wf=$(field "$dir/full" '[summary]' peak_mem_mib) wl=$(field "$dir/lora" '[summary]' peak_mem_mib)
ef=$(field "$dir/efull" '[eager]' peak_rss_mib) el=$(field "$dir/elora" '[eager]' peak_rss_mib)
adapters=$(sed -n 's/^\[lora\] .*adapter_params=\([0-9]*\) .*/\1/p' "$dir/lora")
per() { calc %.2f "$1 * 1048576 / $P"; }
r_w=$(calc %.3f "$wl / $wf") r_e=$(calc %.3f "$el / $ef")
verdict=$(awk -v r="$r_w" 'BEGIN { print (r <= 0.5) ? "PASS" : "FAIL" }')
{
  echo "### LoRA memory"
  echo
  echo "One rank, CPU, fp32, one thread; $P parameters (hidden 1024, 14 layers, 16 heads, 8 KV heads,"
  echo "intermediate 2816, vocabulary 32000, untied), 1 sequence of 64 tokens a step, 2 steps; LoRA rank $rank,"
  echo "alpha $((2 * rank)), all seven projections ($adapters adapter parameters). Peak resident set of the"
  echo "process (wireup: the [summary] line's peak_mem_mib; eager: ru_maxrss). wireup's LoRA run reads its base"
  echo "from a Hugging Face export (--init_from_hf); the eager runs start from random weights."
  echo
  echo "| run | peak RSS MiB | bytes per parameter | wireup / eager |"
  echo "| --- | --- | --- | --- |"
  echo "| wireup full fine-tune | $wf | $(per "$wf") | $(calc %.3f "$wf / $ef") |"
  echo "| eager full fine-tune | $ef | $(per "$ef") | |"
  echo "| wireup LoRA | $wl | $(per "$wl") | $(calc %.3f "$wl / $el") |"
  echo "| eager LoRA (PEFT's layer) | $el | $(per "$el") | |"
  echo
  echo "LoRA / full: wireup **$r_w** — $verdict (<= 0.5); eager $r_e."
} >"$out"
cat "$out"
