#!/usr/bin/env bash
# Llama 3 tokenizer throughput, MB of text per second, against tiktoken (the
# Rust tokenizer behind OpenAI's python package; Debian's python3-tiktoken)
# with the same vocabulary (Meta's tokenizer.model, from fetch-vocab.sh) and
# pattern on the same text: one document per line, encoded one by one
# (tiktoken's encode_ordinary_batch; wireup-bench-tokenize's threads over
# contiguous ranges of lines), on one thread and on all cores, repetitions
# interleaved; plus wireup-prep itself (shards, SHA-256, fsync) on the file.
# Text: Debian's fortunes (English) interleaved with generated multilingual
# lines (CJK, Korean, Arabic, Hindi, emoji, digits), repeated to
# WIREUP_BENCH_PREP_MB (default 48) MB. Needs python3 with tiktoken: the
# trixie lane has it (see bench/prep/CMakeLists.txt for the command).
# Usage: llama3_vs_tiktoken.sh BUILD_DIR OUT.md [REPS]
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
root=$(cd "$(dirname "$0")/../.." && pwd)
vocab=${WIREUP_VOCAB_DIR:-$root/.cache/vocab}/llama3.tiktoken
bench=$build/bench/prep/wireup-bench-tokenize
prep=$build/data/prep/wireup-prep
py=/usr/bin/python3
section() { printf '## prep: Llama 3 tokenizer vs tiktoken\n\n%s\n' "$1" >"$out"; cat "$out"; }
[[ -x $bench && -x $prep ]] || { echo "no $bench or $prep: build first" >&2; exit 1; }
[[ -f $vocab ]] || { echo "no $vocab: run tests/data/vocab/fetch-vocab.sh" >&2; exit 1; }
if ! "$py" -c 'import tiktoken' 2>/dev/null; then
  section "Not run here: $py has no tiktoken (Debian's python3-tiktoken; the trixie lane has it)."
  exit 0
fi
fortunes=/usr/share/games/fortunes
mapfile -t files < <(find "$fortunes" -maxdepth 1 -type f ! -name '*.*' 2>/dev/null | LC_ALL=C sort)
((${#files[@]})) || { echo "no fortune files in $fortunes: apt-get install fortunes" >&2; exit 1; }
dir=$(mktemp -d "${WIREUP_BENCH_TMP:-/tmp}/wireup-bench-llama3.XXXXXX")
trap 'rm -rf "$dir"' EXIT

cat "${files[@]}" | grep -v '^%$' >"$dir/english.txt"
"$py" - "$dir/english.txt" "$dir/corpus.txt" "$((${WIREUP_BENCH_PREP_MB:-48} * 1000000))" <<'PY'
import random, sys
english = [l for l in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n") if l.strip()]
want = int(sys.argv[3])
rng = random.Random(5)
words = ["日本語の文章です", "中文文本处理", "한국어 문장입니다", "العربية لغة", "हिन्दी भाषा",
         "Ελληνικά", "Русский язык", "👨‍👩‍👧 🏳️‍🌈 👍🏽", "2026-11-26 12:34:56", "3.14159 1,000,000"]
lines, size, i = [], 0, 0
while size < want:
    line = english[i % len(english)]
    if i % 4 == 3:  # one line in four multilingual
        line = " ".join(rng.choice(words) for _ in range(rng.randrange(3, 12)))
    lines.append(line)
    size += len(line.encode()) + 1
    i += 1
with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as f:
    f.write("\n".join(lines) + "\n")
PY
bytes=$(stat -c %s "$dir/corpus.txt")
cat "$dir/corpus.txt" >/dev/null

# tiktoken MB/s on THREADS threads (the file read and split beforehand).
tiktoken_mbps() {
  "$py" - "$vocab" "$dir/corpus.txt" "$1" <<'PY'
import base64, sys, time, tiktoken
ranks = {base64.b64decode(t): int(r) for t, r in (l.split() for l in open(sys.argv[1], "rb") if l.strip())}
pat = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
       r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
enc = tiktoken.Encoding("llama3", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
data = open(sys.argv[2], "rb").read()
lines = data.decode("utf-8").split("\n")
threads = int(sys.argv[3])
t0 = time.perf_counter()
ids = enc.encode_ordinary_batch(lines, num_threads=threads)
t1 = time.perf_counter()
print(f"{len(data) / (t1 - t0) / 1e6:.2f} {sum(map(len, ids))}")
PY
}
ours_mbps() { "$bench" "$vocab" "$dir/corpus.txt" "$1"; }
now() { date +%s.%N; }
prep_mbps() {
  local t0 t1
  t0=$(now)
  "$prep" -q --tokenizer "$vocab" --text-docs line --val-fraction 0 --force -j "$1" -o "$dir/out" "$dir/corpus.txt"
  t1=$(now)
  awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.2f", b / (z - a) / 1e6 }'
}

cores=$(nproc)
declare -a tk1 tkn us1 usn pr1 prn
read -r _ tk_tokens < <(tiktoken_mbps 1)  # warm-up, and the token counts
read -r _ us_tokens < <(ours_mbps 1)
for ((r = 0; r < reps; r++)); do
  tk1+=("$(tiktoken_mbps 1 | cut -d' ' -f1)")
  us1+=("$(ours_mbps 1 | cut -d' ' -f1)")
  tkn+=("$(tiktoken_mbps "$cores" | cut -d' ' -f1)")
  usn+=("$(ours_mbps "$cores" | cut -d' ' -f1)")
  pr1+=("$(prep_mbps 1)")
  prn+=("$(prep_mbps "$cores")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
m_tk1=$(median "${tk1[@]}") m_tkn=$(median "${tkn[@]}") m_us1=$(median "${us1[@]}") m_usn=$(median "${usn[@]}")
m_pr1=$(median "${pr1[@]}") m_prn=$(median "${prn[@]}")
same=$([[ $tk_tokens == "$us_tokens" ]] && echo "the same $us_tokens tokens" || echo "DIFFERENT token counts: tiktoken $tk_tokens, wireup $us_tokens")
section "$((bytes / 1000000)) MB of text (Debian's fortunes, one line in four replaced by generated multilingual text; one document per line), Llama 3's tokenizer.model, $same; $reps interleaved repetitions, median (all values) in MB of text per second, $("$py" -c 'import tiktoken; print("tiktoken", tiktoken.__version__)').

| run | MB/s, 1 thread | ratio to tiktoken | MB/s, $cores threads | ratio to tiktoken | $cores threads / 1 |
| --- | --- | --- | --- | --- | --- |
| tiktoken encode_ordinary_batch | $m_tk1 (${tk1[*]}) | 1.000 | $m_tkn (${tkn[*]}) | 1.000 | $(ratio "$m_tkn" "$m_tk1") |
| wireup Tokenizer::encode | $m_us1 (${us1[*]}) | $(ratio "$m_us1" "$m_tk1") | $m_usn (${usn[*]}) | $(ratio "$m_usn" "$m_tkn") | $(ratio "$m_usn" "$m_us1") |
| wireup-prep (shards, SHA-256, fsync) | $m_pr1 (${pr1[*]}) | $(ratio "$m_pr1" "$m_tk1") | $m_prn (${prn[*]}) | $(ratio "$m_prn" "$m_tkn") | $(ratio "$m_prn" "$m_pr1") |

Machine load while it ran (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $cores cores."
