#!/usr/bin/env bash
# The wireup-prep command with .zst input and the inspect subcommand: a data
# set prepared from zstd files (the usual `wireup-prep [options] inputs...`
# form), listed by `wireup-prep inspect`, and the exit status and message of
# each kind of bad input.
# Usage: prep_inspect_cli.sh WIREUP_PREP WORK_DIR
set -uo pipefail
prep=$1
work=$2
rm -rf "$work"
mkdir -p "$work/corpus"
# shellcheck source=../../lib/assert.sh
source "$(dirname "$0")/../../lib/assert.sh"

# Runs the command; sets out (stdout), err (stderr) and rc.
run() {
  out=$("$@" 2>"$work/stderr")
  rc=$?
  err=$(<"$work/stderr")
}

# Two documents of our own first (a tab, quotes and an escape byte in the
# second), then the GPL's paragraphs so the tokenizer has text to learn from.
printf 'first document: alpha beta\n\nsay "hi"\tto all \033[31m red\n' >"$work/a-own.txt"
zstd -q "$work/a-own.txt" -o "$work/corpus/a-own.txt.zst"
zstd -q -c /usr/share/common-licenses/GPL-3 >"$work/corpus/b-gpl.txt.zst"

data=$work/data
run "$prep" --vocab-size 400 -q --text-docs paragraph --val-fraction 0.1 -o "$data" "$work/corpus"
check "prepare from .zst files: exit status" "$rc" 0
run "$prep" --verify "$data" -q
check "--verify still works" "$rc" 0

run "$prep" inspect "$data" --docs 2 --max-tokens 1000
check "inspect: exit status" "$rc" 0
check "inspect: nothing on stderr" "$err" ""
contains "inspect: the data set" "$out" "dataset     $data/manifest.json (wireup-prep "
contains "inspect: the vocabulary" "$out" $'vocabulary  400 pieces, bos 1 (before every document), eos 2 (after every document)\n'
contains "inspect: the token type" "$out" $'token type  uint16 (2 bytes, little-endian)\n'
train_docs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["splits"]["train"]["documents"])' "$data/manifest.json")
contains "inspect: train documents as in the manifest" "$out" "train       1 shard, $train_docs documents, "
contains "inspect: the first document" "$out" $'\ntrain document 0: train-00000.bin document 0, tokens 0..'
contains "inspect: its text" "$out" $'\n  text "first document: alpha beta"\n'
contains "inspect: escaped text" "$out" '  text "say \"hi\"\tto all \x1b[31m red"'
lacks "inspect: no raw escape byte" "$out" $'\033'
contains "inspect: ids start with BOS" "$out" $'\n  ids  1 '

run "$prep" inspect "$data/manifest.json" --split validation --docs 1 --max-tokens 3
check "inspect --split validation: exit status" "$rc" 0
contains "inspect --split validation: its first document" "$out" $'\nvalidation document 0: validation-00000.bin document 0'
contains "inspect --max-tokens: the rest counted" "$out" " more; --max-tokens)"

# Bad input: exit 2, one line naming what was wrong, nothing on stdout.
bad() {
  local what=$1 expected=$2
  shift 2
  run "$prep" "$@"
  if [[ $rc == 2 && $err == *"$expected"* && -z $out ]]; then
    pass "$what: exit 2 with a clear message"
  else
    fail "$what: exit $rc, stdout '${out:0:200}', stderr '$err' (expected exit 2 and '$expected')"
  fi
}
bad "no data set" "dataset is required" inspect
bad "a missing data set" "$work/nope: cannot read manifest" inspect "$work/nope"
bad "a bad split" "--split: test not in {train,validation}" inspect "$data" --split test
bad "--docs 0" "--docs: Value 0 not in range" inspect "$data" --docs 0
bad "--docs x" "--docs" inspect "$data" --docs x
bad "a main option with inspect" "inspect takes no --quiet" -q inspect "$data"
bad "an output with inspect" "not expected" inspect "$data" -o "$work/x"
"$prep" --vocab-size 350 -q --val-fraction 0 -o "$work/other" "$work/corpus"
bad "another tokenizer" "has a vocabulary of 350 pieces but the data set's manifest records tokenizer.vocab_size 400" \
  inspect "$data" --tokenizer "$work/other/tokenizer.model"
cp -r "$data" "$work/corrupt"
truncate -s -4 "$work/corrupt/train-00000.bin"
bad "a truncated shard" "$work/corrupt/train-00000.bin: file is" inspect "$work/corrupt"

# An input named inspect: as ./inspect it is an input; bare, the subcommand.
mkdir -p "$work/named/inspect"
cp "$work/a-own.txt" /usr/share/common-licenses/GPL-3 "$work/named/inspect/"
run bash -c 'cd "$1/named" && "$2" --vocab-size 400 -q --val-fraction 0 -o out ./inspect' _ "$work" "$prep"
check "an input named ./inspect: exit status" "$rc" 0
bad "a bare input named inspect" "dataset is required" --vocab-size 400 -o "$work/x" inspect

# A truncated .zst input: exit 2 naming it, no output left.
head -c 2000 "$work/corpus/b-gpl.txt.zst" >"$work/cut.txt.zst"
run "$prep" --vocab-size 300 -q -o "$work/out-cut" "$work/cut.txt.zst"
check "a truncated .zst: exit status" "$rc" 2
contains "a truncated .zst: the message" "$err" "$work/cut.txt.zst: zstd data error at uncompressed byte"
if [[ -e $work/out-cut ]]; then fail "a truncated .zst: output left"; else pass "a truncated .zst: no output left"; fi

finish
