#!/usr/bin/env bash
# prep-data.sbatch on the cluster: the demo corpus (INPUT=demo, Debian's
# fortunes) with a trained tokenizer; a resubmission keeps and verifies it;
# a plain text corpus tokenised with an existing tokenizer (TOKENIZER=).
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
T=$TEMPLATES/prep-data.sbatch

if [[ -d /usr/share/games/fortunes ]]; then
  rc=$(INPUT=demo VOCAB_SIZE=1000 DATA_DIR=$WORK/fortunes run_job demo 120 -t 5 "$T")
  show demo
  check "INPUT=demo: job completes" "$rc" 0
  out=$(cat "$WORK/demo.out")
  contains "INPUT=demo: 43 fortune files" "$out" "inputs=43"
  contains "INPUT=demo: verified" "$out" "all shards match manifest.json"
  expect "manifest: vocabulary 1000" grep -q '"vocab_size": 1000' "$WORK/fortunes/manifest.json"
  docs=$(sed -n '/"train"/,/}/s/.*"documents": \([0-9]*\).*/\1/p' "$WORK/fortunes/manifest.json" | head -n 1)
  expect "one document per fortune ($docs)" test "${docs:-0}" -gt 10000
  sum=$(sha256sum <"$WORK/fortunes/manifest.json")

  rc=$(INPUT=demo VOCAB_SIZE=1000 DATA_DIR=$WORK/fortunes run_job again 60 -t 5 "$T")
  show again
  check "resubmitted: job completes" "$rc" 0
  contains "resubmitted: existing data set kept" "$(cat "$WORK/again.out")" "already holds a data set"
  check "resubmitted: manifest unchanged" "$(sha256sum <"$WORK/fortunes/manifest.json")" "$sum"
  tokenizer=$WORK/fortunes/tokenizer.model
else
  echo "note: Debian's fortunes package is not installed; INPUT=demo not tested"
  "$WIREUP_BIN_DIR/wireup-prep" -q --vocab-size 500 --text-docs paragraph -o "$WORK/tok" \
    /usr/share/common-licenses
  tokenizer=$WORK/tok/tokenizer.model
fi

# A text corpus with an existing SentencePiece model, as with Llama 2's.
rc=$(INPUT="/usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0" \
  TOKENIZER=$tokenizer DATA_DIR=$WORK/licenses PREP_ARGS='--text-docs paragraph --val-fraction 0.05' \
  run_job licenses 120 -t 5 "$T")
show licenses
check "TOKENIZER=: job completes" "$rc" 0
expect "manifest: the given tokenizer" grep -qF "\"source\": \"$tokenizer\"" "$WORK/licenses/manifest.json"
expect "tokenizer copied byte for byte" cmp -s "$tokenizer" "$WORK/licenses/tokenizer.model"

# A missing tokenizer is a clear error before anything runs.
rc=$(INPUT=/usr/share/common-licenses TOKENIZER=$WORK/none.model DATA_DIR=$WORK/bad run_job bad 60 -t 5 "$T")
expect "missing tokenizer: job fails" test "$rc" != 0
contains "missing tokenizer: says why" "$(cat "$WORK/bad.out")" "no tokenizer at $WORK/none.model"
nodes_idle
finish
