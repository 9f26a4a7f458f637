#!/usr/bin/env bash
# SFT's document masking against plain causal training on the same packed windows
# (one rank): wireup-train on a chat data set with --document_masking 1 (each
# token sees only its own conversation, positions restart) and 0 (causal over the
# whole window; the same masked loss), tokens/s of REPS interleaved runs each,
# medians; and the loader's packing efficiency. Writes a Markdown section to OUT.
# On the CPU (default): fp32, one thread, windows of 512, the blocked attention.
# On CUDA (WIREUP_BENCH_SFT_DEVICE=cuda): bf16, windows of 2048, batch 8; document
# masking runs twice, on the attention it chooses (varlen flash where the LibTorch
# has it, the [attention] line names it) and forced onto SDPA's mask
# (WIREUP_DOCUMENT_ATTENTION=mask).
# Usage: sft_bench.sh BUILD_DIR OUT.md [REPS]
# Environment: WIREUP_VOCAB_DIR (llama3.tiktoken; default <repo>/.cache/vocab),
# WIREUP_BENCH_SFT_STEPS (8 steps, the first 2 untimed), WIREUP_BENCH_SFT_DEVICE
# (cpu or cuda).
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
steps=${WIREUP_BENCH_SFT_STEPS:-8}
device=${WIREUP_BENCH_SFT_DEVICE:-cpu}
[[ $device == cpu || $device == cuda ]] ||
  { echo "WIREUP_BENCH_SFT_DEVICE=$device: expected cpu or cuda" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
train=$build/trainer/wireup-train prep=$build/data/prep/wireup-prep
tok=${WIREUP_VOCAB_DIR:-$here/../../.cache/vocab}/llama3.tiktoken
[[ -x $train && -x $prep ]] || { echo "no $train or $prep: build first" >&2; exit 1; }
[[ -f $tok ]] || { echo "no $tok: run tests/data/vocab/fetch-vocab.sh" >&2; exit 1; }
dir=$(mktemp -d /tmp/wireup-bench-sft.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1
# Conversations of a realistic length mix: log-normal word counts (median about 60 words
# for the answer, 20 for the question), words from a fixed list.
python3 - "$dir/chat.jsonl" <<'PY'
import json, math, random, sys
rng = random.Random(11)
words = ("the of and to in is that for it as was with be by on not he this are or his from at "
         "which but have an they you were her she there one all we their been has when who will "
         "more no if out so said what up its about into than them can only other new some could "
         "time these two may then do first any my now such like our over man me even most made").split()
def text(median):
    n = max(1, int(rng.lognormvariate(math.log(median), 0.7)))
    return " ".join(rng.choice(words) for _ in range(n)) + "."
with open(sys.argv[1], "w") as f:
    for _ in range(3000):
        f.write(json.dumps({"prompt": text(20), "completion": text(60)}) + "\n")
PY
"$prep" "$dir/chat.jsonl" --tokenizer "$tok" --chat-template llama3 --val-fraction 0 \
  -o "$dir/data" >"$dir/prep.log" 2>&1 || { cat "$dir/prep.log" >&2; exit 1; }
args=(--preset small --vocab_size 128256 --dataset "$dir/data" --max_steps "$steps" --logging_freq 1)
case $device in
  cpu) args+=(--max_context_width 512 --train_batch_size 4 --num_threads 1)
       runs=(causal masked) what="CPU, one thread, fp32, windows of 512 tokens, batch 4" ;;
  cuda) args+=(--max_context_width 2048 --train_batch_size 8 --device cuda --bf16 1)
        runs=(causal masked mask) what="CUDA, bf16, windows of 2048 tokens, batch 8" ;;
esac
field() { sed -n "s/.* $2=\([0-9.e+-]*\).*/\1/p" "$1" | head -n 1; }
mean_after2() { sed -n 's/^\[train\] step=\([0-9]*\)\/.* tokens_per_s=\([0-9.e+-]*\) .*/\1 \2/p' "$1" |
  awk '$1 > 2 {s += $2; n++} END {if (n) printf "%.1f", s / n}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A tps
for ((i = 0; i < reps; i++)); do
  order=("${runs[@]}")
  ((i % 2 == 0)) || mapfile -t order < <(printf '%s\n' "${runs[@]}" | tac)
  for r in "${order[@]}"; do
    flags=(--document_masking 1) force=
    [[ $r == causal ]] && flags=(--document_masking 0)
    [[ $r == mask ]] && force=mask
    WIREUP_DOCUMENT_ATTENTION=$force timeout 900 "$train" "${args[@]}" "${flags[@]}" \
      >"$dir/run.$r.$i" 2>&1 || { cat "$dir/run.$r.$i" >&2; exit 1; }
    tps[$r]+="$(mean_after2 "$dir/run.$r.$i") "
  done
  echo "  sft rep $((i + 1)): tokens/s$(for r in "${runs[@]}"; do
    read -ra v <<<"${tps[$r]}"; printf ' %s %s' "$r" "${v[i]}"; done)" >&2
done
med() { local v; read -ra v <<<"${tps[$1]}"; median "${v[@]}"; }
path() { sed -n 's/^\[attention\] document_masking=1 path=\([a-z_]*\).*/\1/p' "$dir/run.$1.0"; }
OFF=$(med causal) ON=$(med masked)
ratio=$(awk -v a="$ON" -v b="$OFF" 'BEGIN { printf "%.3f", a / b }')
eff=$(field "$dir/run.masked.0" efficiency)
{
  echo "## trainer: SFT with document masking vs plain causal attention ($what)"
  echo
  echo "3,000 generated conversations (log-normal lengths, Llama 3 tokenizer and chat template),"
  echo "packed into windows (packing efficiency $eff); \`--preset small\` with vocabulary"
  echo "128256, one rank; tokens/s averaged over steps 3-$steps; $reps interleaved runs each, medians."
  echo "Every run trains the same windows and masked loss; \`--document_masking 0\` attends causally"
  echo "across the conversations of a window."
  echo
  echo "| run | attention | tokens/s (median) | all runs |"
  echo "| --- | --- | --- | --- |"
  echo "| \`--document_masking 0\` (plain causal) | causal | $OFF | ${tps[causal]}|"
  echo "| \`--document_masking 1\` | $(path masked) | $ON | ${tps[masked]}|"
  if [[ -n ${tps[mask]:-} ]]; then
    echo "| \`--document_masking 1\`, \`WIREUP_DOCUMENT_ATTENTION=mask\` | $(path mask) | $(med mask) | ${tps[mask]}|"
  fi
  echo
  echo "- **Document masking / causal: $ratio** — $(awk -v r="$ratio" 'BEGIN { print (r >= 0.95) ? "PASS (>= 0.95)" : "FAIL (>= 0.95)" }')."
  if [[ -n ${tps[mask]:-} ]]; then
    echo "- Forced mask / causal: $(awk -v a="$(med mask)" -v b="$OFF" 'BEGIN { printf "%.3f", a / b }')."
  fi
} >"$out"
cat "$out"
