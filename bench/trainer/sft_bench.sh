#!/usr/bin/env bash
# SFT's document masking against plain causal training on the same packed windows
# (CPU, one rank): wireup-train on a chat data set with --document_masking 1 (each
# token sees only its own conversation, positions restart) and 0 (causal over the
# whole window; the same masked loss), tokens/s of REPS interleaved runs each,
# medians; and the loader's packing efficiency. Writes a Markdown section to OUT.
# Usage: sft_bench.sh BUILD_DIR OUT.md [REPS]
# Environment: WIREUP_VOCAB_DIR (llama3.tiktoken; default <repo>/.cache/vocab),
# WIREUP_BENCH_SFT_STEPS (8 steps, the first 2 untimed).
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
steps=${WIREUP_BENCH_SFT_STEPS:-8}
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
args=(--preset small --vocab_size 128256 --max_context_width 512 --dataset "$dir/data"
      --train_batch_size 4 --max_steps "$steps" --logging_freq 1 --num_threads 1)
field() { sed -n "s/.* $2=\([0-9.e+-]*\).*/\1/p" "$1" | head -n 1; }
mean_after2() { sed -n 's/^\[train\] step=\([0-9]*\)\/.* tokens_per_s=\([0-9.e+-]*\) .*/\1 \2/p' "$1" |
  awk '$1 > 2 {s += $2; n++} END {if (n) printf "%.1f", s / n}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -a on off
for ((i = 0; i < reps; i++)); do
  order=(1 0)
  ((i % 2 == 0)) || order=(0 1)
  for m in "${order[@]}"; do
    timeout 900 "$train" "${args[@]}" --document_masking "$m" >"$dir/run.$m.$i" 2>&1 ||
      { cat "$dir/run.$m.$i" >&2; exit 1; }
    if ((m)); then on+=("$(mean_after2 "$dir/run.$m.$i")"); else off+=("$(mean_after2 "$dir/run.$m.$i")"); fi
  done
  echo "  sft rep $((i + 1)): tokens/s masked ${on[i]}, causal ${off[i]}" >&2
done
ON=$(median "${on[@]}") OFF=$(median "${off[@]}")
ratio=$(awk -v a="$ON" -v b="$OFF" 'BEGIN { printf "%.3f", a / b }')
eff=$(field "$dir/run.1.0" efficiency)
{
  echo "## trainer: SFT with document masking vs plain causal attention (CPU, one thread)"
  echo
  echo "3,000 generated conversations (log-normal lengths, Llama 3 tokenizer and chat template),"
  echo "packed into windows of 512 tokens (packing efficiency $eff); \`--preset small\` with vocabulary"
  echo "128256, batch 4, fp32, one rank; tokens/s averaged over steps 3-$steps; $reps interleaved runs each, medians."
  echo "Both sides train the same windows and masked loss; \`--document_masking 0\` attends causally"
  echo "across the conversations of a window."
  echo
  echo "| run | tokens/s (median) | all runs |"
  echo "| --- | --- | --- |"
  echo "| \`--document_masking 0\` (plain causal) | $OFF | ${off[*]} |"
  echo "| \`--document_masking 1\` | $ON | ${on[*]} |"
  echo
  echo "- **Document masking / causal: $ratio** — $(awk -v r="$ratio" 'BEGIN { print (r >= 0.95) ? "PASS (>= 0.95)" : "FAIL (>= 0.95)" }')."
} >"$out"
cat "$out"
