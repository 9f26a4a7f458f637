#!/usr/bin/env bash
# wireup-prep given files from outside that lie: a tokenizer, manifest or
# shard that is a FIFO, a device, a huge file, or a tokenizer.json whose ids
# run far past its entries. Each is refused with exit 2 naming the file,
# within seconds, under a 1 GiB address-space limit (ulimit -v).
# Usage: prep_outside_files.sh WIREUP_PREP WORK_DIR
set -uo pipefail
prep=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=../../lib/assert.sh
source "$(dirname "$0")/../../lib/assert.sh"

limit_kib=$((1024 * 1024))

# refused WHAT EXPECTED ARGS...: wireup-prep ARGS under a 1 GiB address-space
# limit and a 20 s watchdog exits 2 within 5 s with EXPECTED in its message.
refused() {
  local what=$1 expected=$2 msg rc start ms
  shift 2
  start=$(date +%s%N)
  # shellcheck disable=SC2016 # $1 and $@ are the inner shell's
  msg=$(timeout 20 bash -c 'ulimit -v "$1"; shift; exec "$@"' _ "$limit_kib" "$prep" "$@" 2>&1)
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  if [[ $rc == 2 && $msg == *"$expected"* && $ms -lt 5000 ]]; then
    pass "$what: exit 2 after $ms ms naming it"
  else
    fail "$what: exit $rc after $ms ms (expected 2 within 5000 ms with '$expected'): $msg"
  fi
}

# A good data set to damage copies of.
corpus=$work/corpus.txt
for i in $(seq 1 300); do
  echo "line $i: the quick brown fox jumps over the lazy dog near river $((i % 13))"
done >"$corpus"
good=$work/good
if ! "$prep" --vocab-size 300 -q --text-docs line -o "$good" "$corpus"; then
  fail "could not prepare the data set the checks damage"
  finish
fi

# A copy of the good data set with FILE replaced by what `make` (a command
# given the path) puts there.
damaged() {
  local name=$1 file=$2
  shift 2
  rm -rf "${work:?}/$name"
  cp -r "$good" "$work/$name"
  rm -f "$work/$name/$file"
  "$@" "$work/$name/$file"
}
fifo() { mkfifo "$1"; }
dev_zero() { ln -s /dev/zero "$1"; }
sparse_8g() { truncate -s 8G "$1"; }

# --tokenizer FILE: a FIFO used to block in open, /dev/zero to be read until
# memory ran out.
mkfifo "$work/tok.fifo"
refused "--tokenizer FIFO" "tokenizer '$work/tok.fifo': cannot read (not a regular file" \
  --tokenizer "$work/tok.fifo" -q -o "$work/out" "$corpus"
refused "--tokenizer /dev/zero" "tokenizer '/dev/zero': cannot read (not a regular file" \
  --tokenizer /dev/zero -q -o "$work/out" "$corpus"
truncate -s 8G "$work/huge.model"
refused "--tokenizer 8 GiB file" "huge.model': cannot read (8589934592 bytes, more than the" \
  --tokenizer "$work/huge.model" -q -o "$work/out" "$corpus"

# A 3 KB tokenizer.json with one id 16777215 (its tables took 1.2 GB).
/usr/bin/python3 - "$work/big-id.json" <<'EOF'
import json, sys
# GPT-2's byte alphabet: printable bytes stand for themselves, the rest map past U+0100.
keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
spell, extra = {}, 0
for b in range(256):
    if b in keep:
        spell[b] = chr(b)
    else:
        spell[b] = chr(256 + extra)
        extra += 1
vocab = {spell[b]: b for b in range(256)}
vocab["ab"] = 16777215
tok = {"normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
       "model": {"type": "BPE", "vocab": vocab, "merges": []}}
open(sys.argv[1], "w").write(json.dumps(tok))
EOF
refused "tokenizer.json with id 16777215" "big-id.json': vocab entry 'ab' has id 16777215, not below" \
  --tokenizer "$work/big-id.json" -q -o "$work/out" "$corpus"

# A 50 MB tokenizer.json of 16 million empty arrays (its parse tree alone
# would take some 1.5 GB): refused before the parse, within the limit.
/usr/bin/python3 -c 'import sys; open(sys.argv[1], "w").write("{\"model\": [" + "[]," * 16777216 + "[]]}")' \
  "$work/wide.json"
refused "tokenizer.json of 16 million values" "wide.json': more than 8388608 JSON values" \
  --tokenizer "$work/wide.json" -q -o "$work/out" "$corpus"
rm -f "$work/wide.json"

# The data set's own files: manifest.json, the tokenizer copy and a shard.
damaged manifest-fifo manifest.json fifo
refused "--verify, manifest.json a FIFO" "manifest-fifo/manifest.json: cannot read manifest" \
  --verify "$work/manifest-fifo"
refused "inspect, manifest.json a FIFO" "manifest-fifo/manifest.json: cannot read manifest" \
  inspect "$work/manifest-fifo"
damaged manifest-zero manifest.json dev_zero
refused "--verify, manifest.json /dev/zero" "manifest-zero/manifest.json: cannot read manifest" \
  --verify "$work/manifest-zero"
damaged manifest-huge manifest.json sparse_8g
refused "--verify, manifest.json of 8 GiB" "manifest-huge/manifest.json: 8589934592 bytes, more than" \
  --verify "$work/manifest-huge"
damaged tokenizer-fifo tokenizer.model fifo
refused "--verify, the tokenizer copy a FIFO" "tokenizer-fifo/tokenizer.model: not a regular file" \
  --verify "$work/tokenizer-fifo"
refused "inspect, the tokenizer copy a FIFO" "tokenizer-fifo/tokenizer.model: not a regular file" \
  inspect "$work/tokenizer-fifo"
damaged tokenizer-zero tokenizer.model dev_zero
refused "--verify, the tokenizer copy /dev/zero" "tokenizer-zero/tokenizer.model: not a regular file" \
  --verify "$work/tokenizer-zero"
damaged shard-fifo train-00000.bin fifo
refused "--verify, a shard a FIFO" "shard-fifo/train-00000.bin: not a regular file" \
  --verify "$work/shard-fifo"
refused "inspect, a shard a FIFO" "shard-fifo/train-00000.bin: not a regular file" \
  inspect "$work/shard-fifo"

finish
