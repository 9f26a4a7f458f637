#!/usr/bin/env bash
# wireup-prep on preference rows from the command line, as a user runs it:
# a bad row stops the run with exit 2 naming file and line and leaves no
# output; --skip-bad-rows leaves it out, counted by reason; inspect names each
# pair's documents; --skip-bad-rows on rows that are neither chat nor pairs
# is refused.
# Usage: prep_preference_cli.sh WIREUP_PREP VOCAB_DIR WORK_DIR
set -uo pipefail
prep=$1
tok=$2/llama3.tiktoken
work=$3
rm -rf "$work"
mkdir -p "$work/in"
# shellcheck source=../../lib/assert.sh
source "$(dirname "$0")/../../lib/assert.sh"

cat >"$work/in/pairs.jsonl" <<'ROWS'
{"prompt": "The sky is", "chosen": " blue.", "rejected": " green."}
{"prompt": "q", "chosen": "a"}
{"chosen": "The answer is yes.", "rejected": "The answer is no."}
ROWS
msg=$("$prep" "$work/in" -o "$work/out" --tokenizer "$tok" --val-fraction 0 -q 2>&1)
check "a bad row: exit 2" "$?" 2
contains "naming file and line" "$msg" "pairs.jsonl:2: no 'rejected'"
check "no output" "$(test -e "$work/out" && echo there || echo none)" none

msg=$("$prep" "$work/in" -o "$work/out" --tokenizer "$tok" --val-fraction 0 --skip-bad-rows 2>&1)
check "--skip-bad-rows: exit 0" "$?" 0
contains "pairs counted" "$msg" "preference pairs (text): 2 pairs"
contains "skipped by reason" "$msg" "skipped 1 bad row(s) (--skip-bad-rows): missing_key=1"

msg=$("$prep" inspect "$work/out" --docs 2 2>&1)
contains "inspect: the data set's pairs" "$msg" "preference  pairs (text): 2 pairs"
contains "inspect: pair 0's chosen document" "$msg" "pair 0 chosen"
contains "inspect: its completion marked" "$msg" "(marked *) \" blue.<|end_of_text|>\""
contains "inspect: pair 0's rejected document" "$msg" "pair 0 rejected"

printf '%s\n' '{"text": "plain"}' >"$work/in/pairs.jsonl"
msg=$("$prep" "$work/in" -o "$work/out2" --tokenizer "$tok" --skip-bad-rows -q 2>&1)
check "--skip-bad-rows on plain rows: exit 2" "$?" 2
contains "says what it applies to" "$msg" "--skip-bad-rows applies to chat rows"
finish
