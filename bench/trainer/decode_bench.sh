#!/usr/bin/env bash
# `wireup-train generate` against PyTorch eager decoding with a KV cache
# (decode_eager.py) on the same random Llama and prompt, one thread each, CPU:
# tokens/s of greedy decoding (prefill of the prompt + NEW tokens), REPS
# interleaved runs of each, medians. Writes a Markdown section to OUT.
# Usage: decode_bench.sh BUILD_DIR OUT.md [REPS]
# Environment: WIREUP_BENCH_DECODE_NEW (256 new tokens), WIREUP_VOCAB_DIR
# (llama3.tiktoken; default <repo>/.cache/vocab: tests/data/vocab/fetch-vocab.sh).
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
new=${WIREUP_BENCH_DECODE_NEW:-256}
here=$(cd "$(dirname "$0")" && pwd)
train=$build/trainer/wireup-train
py=/usr/bin/python3
tok=${WIREUP_VOCAB_DIR:-$here/../../.cache/vocab}/llama3.tiktoken
[[ -x $train ]] || { echo "no $train: build first" >&2; exit 1; }
[[ -f $tok ]] || { echo "no $tok: run tests/data/vocab/fetch-vocab.sh" >&2; exit 1; }
dir=$(mktemp -d /tmp/wireup-bench-decode.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1
shape=(--vocab 128256 --hidden 512 --layers 4 --heads 8 --kv_heads 4 --intermediate 1376 --context 2048)
"$py" "$here/decode_eager.py" make "$dir/model" "${shape[@]}"
prompt="The quick brown fox jumps over the lazy dog because"
gen=("$train" generate --init_from_hf "$dir/model" --tokenizer "$tok" --num_threads 1 --prompt "$prompt"
  --max_new_tokens "$new" --show_ids)
"${gen[@]}" >"$dir/ids.json" 2>/dev/null
ids=$("$py" -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1]))["prompt_ids"])))' "$dir/ids.json")
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Peers: eager as users write it (F.linear), and eager with one-row
# projections through torch.mv (faster in torch 1.13); wireup first in every
# other repetition.
declare -a w e m
for ((i = 0; i < reps; i++)); do
  order=(wireup eager mv)
  ((i % 2 == 0)) || order=(mv eager wireup)
  for side in "${order[@]}"; do
    case $side in
      wireup)
        "${gen[@]}" >"$dir/w.$i" 2>"$dir/w.$i.err"
        w+=("$(field "$dir/w.$i.err" tokens_per_s)") ;;
      eager)
        "$py" "$here/decode_eager.py" run "$dir/model" --ids "$ids" --max_new "$new" >"$dir/e.$i"
        e+=("$(field "$dir/e.$i" tokens_per_s)") ;;
      mv)
        "$py" "$here/decode_eager.py" run "$dir/model" --ids "$ids" --max_new "$new" --mv >"$dir/m.$i"
        m+=("$(field "$dir/m.$i" tokens_per_s)") ;;
    esac
  done
  echo "  decode rep $((i + 1)): tokens/s wireup ${w[i]}, eager ${e[i]}, eager with mv ${m[i]}" >&2
done
W=$(median "${w[@]}") E=$(median "${e[@]}") M=$(median "${m[@]}")
ratio=$(awk -v a="$W" -v b="$E" 'BEGIN { printf "%.3f", a / b }')
ratio_mv=$(awk -v a="$W" -v b="$M" 'BEGIN { printf "%.3f", a / b }')
pass() { awk -v r="$1" 'BEGIN { print (r >= 1.0) ? "PASS (>= 1.0)" : "FAIL (>= 1.0)" }'; }
agree=$("$py" -c '
import json, sys
a = json.load(open(sys.argv[1]))["ids"]
b = [int(x) for x in open(sys.argv[2]).read().split("ids=")[1].split(",")]
n = 0
while n < min(len(a), len(b)) and a[n] == b[n]:
    n += 1
print(n)' "$dir/w.0" "$dir/e.0" 2>/dev/null || echo "?")
{
  echo "## trainer: wireup-train generate vs PyTorch eager decoding (CPU, one thread)"
  echo
  echo "Random fp32 Llama (hidden 512, 4 layers, 8 heads, 4 KV heads, intermediate 1376, vocab 128256),"
  echo "a $(tr ',' '\n' <<<"$ids" | wc -l)-token prompt (Llama 3 tokenizer), greedy, $new new tokens, KV cache on both sides;"
  echo "tokens/s from the prompt's prefill to the last token. Peer: decode_eager.py (Debian python3-torch"
  echo "$("$py" -c 'import torch; print(torch.__version__)'), HF layout, preallocated cache). $reps interleaved runs each, medians."
  echo
  echo "| run | tokens/s (median) | all runs |"
  echo "| --- | --- | --- |"
  echo "| PyTorch eager, KV cache (F.linear) | $E | ${e[*]} |"
  echo "| PyTorch eager, KV cache, one-row projections by torch.mv | $M | ${m[*]} |"
  echo "| wireup-train generate | $W | ${w[*]} |"
  echo
  echo "- **Decoding** wireup / eager: **$ratio** — $(pass "$ratio"); wireup / eager with torch.mv: **$ratio_mv** — $(pass "$ratio_mv")."
  echo "  Greedy ids identical for the first $agree of $new tokens (near-ties of a random model's flat"
  echo "  logits may part the two fp32 computations later; the tests check equality on sharper models)."
} >"$out"
cat "$out"
