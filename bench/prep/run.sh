#!/usr/bin/env bash
# wireup-prep throughput, MB of text per second, on one thread and on all
# cores, against SentencePiece's own encoder (`spm_encode`, Debian's
# sentencepiece package: one thread, ids to /dev/null) with the same model on
# the same text, repetitions interleaved. wireup-prep does more per byte: it
# also writes the shards, their SHA-256 and the manifest, and fsyncs them.
# Text: Debian's fortunes (the demo corpus) repeated to WIREUP_BENCH_PREP_MB
# (default 48) MB, one document per line (spm_encode's unit too). Then
# llama3_vs_tiktoken.sh: Meta's Llama 3 tokenizer against tiktoken.
# Usage: run.sh BUILD_DIR OUT.md [REPS]
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
prep=$build/data/prep/wireup-prep
[[ -x $prep ]] || { echo "no $prep: build first" >&2; exit 1; }
command -v spm_encode >/dev/null || { echo "no spm_encode: apt-get install sentencepiece" >&2; exit 1; }
fortunes=/usr/share/games/fortunes
mapfile -t files < <(find "$fortunes" -maxdepth 1 -type f ! -name '*.*' 2>/dev/null | LC_ALL=C sort)
((${#files[@]})) || { echo "no fortune files in $fortunes: apt-get install fortunes" >&2; exit 1; }
dir=$(mktemp -d "${WIREUP_BENCH_TMP:-/tmp}/wireup-bench-prep.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# The tokenizer: the demo's (8000 pieces, trained on the fortunes).
"$prep" -q --vocab-size 8000 --doc-separator % -o "$dir/tok" "${files[@]}"
model=$dir/tok/tokenizer.model
want=$((${WIREUP_BENCH_PREP_MB:-48} * 1000000))
cat "${files[@]}" >"$dir/once.txt"
while (($(stat -c %s "$dir/corpus.txt" 2>/dev/null || echo 0) < want)); do cat "$dir/once.txt" >>"$dir/corpus.txt"; done
bytes=$(stat -c %s "$dir/corpus.txt")
cat "$dir/corpus.txt" >/dev/null  # into the page cache before any timing

now() { date +%s.%N; }
# mbps COMMAND...: MB of the corpus per second of one run
mbps() {
  local t0 t1
  t0=$(now)
  "$@"
  t1=$(now)
  awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.2f", b / (z - a) / 1e6 }'
}
run_prep() { "$prep" -q --tokenizer "$model" --text-docs line --val-fraction 0 --force -j "$1" -o "$dir/out" "$dir/corpus.txt"; }
run_spm() { spm_encode --model "$model" --output_format id <"$dir/corpus.txt" >/dev/null; }

cores=$(nproc)
one=() all=() spm=()
run_prep 1  # warm-up
for ((r = 0; r < reps; r++)); do
  spm+=("$(mbps run_spm)")
  one+=("$(mbps run_prep 1)")
  all+=("$(mbps run_prep "$cores")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ms=$(median "${spm[@]}") m1=$(median "${one[@]}") mn=$(median "${all[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
tokens=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["splits"]["train"]["tokens"])' "$dir/out/manifest.json" 2>/dev/null || echo "?")
{
  echo "## prep: wireup-prep throughput"
  echo
  echo "$((bytes / 1000000)) MB of text (Debian's fortunes, repeated; one document per line), tokenizer of 8000 pieces trained on them, $tokens tokens; $reps interleaved repetitions, median (all values) in MB of text per second."
  echo
  echo "| run | MB/s | ratio to spm_encode |"
  echo "| --- | --- | --- |"
  echo "| spm_encode (one thread, ids to /dev/null) | $ms (${spm[*]}) | 1.000 |"
  echo "| wireup-prep -j 1 (shards, SHA-256, fsync) | $m1 (${one[*]}) | $(ratio "$m1" "$ms") |"
  echo "| wireup-prep -j $cores | $mn (${all[*]}) | $(ratio "$mn" "$ms") |"
  echo
  echo "wireup-prep on $cores cores / on one: $(ratio "$mn" "$m1")."
  echo
  echo "Machine load while it ran (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $cores cores."
} >"$out"
# The Llama 3 tokenizer against tiktoken: a section of its own (it says why when not run).
if bash "$(dirname "$0")/llama3_vs_tiktoken.sh" "$build" "$dir/llama3.md" "$reps" >/dev/null; then
  { echo; cat "$dir/llama3.md"; } >>"$out"
else
  printf '\n## prep: Llama 3 tokenizer vs tiktoken\n\nFAILED (see the console output)\n' >>"$out"
fi
cat "$out"
