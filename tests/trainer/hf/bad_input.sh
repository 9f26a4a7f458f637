#!/usr/bin/env bash
# Export and import refuse bad input with exit 2 and a message naming the file:
# missing or incomplete checkpoints, corrupted or truncated shards, a config.json
# that does not match the model flags or holds fields wireup cannot represent
# (all listed in one error), missing or damaged safetensors, a missing shard
# or an index naming a tensor its shard lacks.
source "$(dirname "$0")/lib.sh"
common=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2)

flip() {  # FILE OFFSET
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $(((byte + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
export_to() { "$WIREUP_TRAIN" export --checkpoint "$1" --out "$2"; }

train 2 "${common[@]}" --max_steps 2 --checkpoint_dir "$WORK/ck" >/dev/null
step=$WORK/ck/step-00000002
export_to "$WORK/ck" "$WORK/hf" >/dev/null

# --- export
expect_error "missing checkpoint dir" "$WORK/nope: no such checkpoint directory" \
  export_to "$WORK/nope" "$WORK/o"
mkdir -p "$WORK/empty"
expect_error "dir without checkpoints" "$WORK/empty: no complete checkpoint" \
  export_to "$WORK/empty" "$WORK/o"
expect_error "no arguments" "export: RequiredError: --checkpoint is required" "$WIREUP_TRAIN" export
expect_error "no --out" "export: RequiredError: --out is required" "$WIREUP_TRAIN" export --checkpoint "$WORK/ck"
expect_error "unknown argument" "was not expected: --bogus" "$WIREUP_TRAIN" export --checkpoint "$WORK/ck" \
  --out "$WORK/o" --bogus
expect_error "bad --dtype" "--dtype float16: expected float32 or bfloat16" \
  "$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/o" --dtype float16

cp -a "$step" "$WORK/pristine"
reset_step() { rm -rf "$step"; cp -a "$WORK/pristine" "$step"; }
flip "$step/rank-00001.bin" 100
expect_error "corrupted chunk" "$step/rank-00001.bin: checksum mismatch" export_to "$step" "$WORK/o"
[[ ! -e $WORK/o/model.safetensors && ! -e $WORK/o/config.json && -z $(ls -A "$WORK/o" 2>/dev/null) ]] &&
  pass "failed export leaves no files" || fail "failed export left: $(ls -A "$WORK/o")"
reset_step
truncate -s -4 "$step/rank-00000.bin"
expect_error "truncated shard" "$step/rank-00000.bin: " export_to "$step" "$WORK/o"
reset_step
rm "$step/rank-00001.bin"
expect_error "missing shard" "$step/rank-00001.bin: open" export_to "$step" "$WORK/o"
reset_step
echo '{"format": "wireup-checkpoint", ' >"$step/metadata.json"
expect_error "malformed metadata" "$step/metadata.json" export_to "$step" "$WORK/o"
reset_step
rm "$step/metadata.json"
expect_error "uncommitted step dir" "$step/metadata.json: missing" export_to "$step" "$WORK/o"
reset_step
# A failed export leaves an earlier one in place.
export_to "$WORK/ck" "$WORK/o" >/dev/null
before=$(st_data "$WORK/o/model.safetensors")
flip "$step/rank-00000.bin" 100
expect_error "corrupt again" "checksum mismatch" export_to "$WORK/ck" "$WORK/o"
[[ $(st_data "$WORK/o/model.safetensors") == "$before" && $(ls -A "$WORK/o" | wc -l) == 2 ]] &&
  pass "failed export keeps the previous output intact" || fail "previous output damaged"
reset_step

# --- import
init() { "$WIREUP_TRAIN" "${common[@]}" --max_steps 1 --init_from_hf "$@"; }
cp -a "$WORK/hf" "$WORK/bad"
sed -i 's/"num_hidden_layers": 2/"num_hidden_layers": 3/' "$WORK/bad/config.json"
expect_error "config mismatch" "$WORK/bad/config.json: does not match the model flags" init "$WORK/bad"
expect_error "config mismatch names the field" "num_hidden_layers=3 but --num_layers 2" init "$WORK/bad"
set +e
out=$(train_all 2 "${common[@]}" --max_steps 1 --init_from_hf "$WORK/bad" 2>&1); rc=$?
set -e
((rc != 0)) && [[ $out == *"does not match the model flags"* ]] &&
  pass "config mismatch on 2 ranks: non-zero exit" || fail "2 ranks: exit $rc: $out"
expect_error "flags vs config" "hidden_size=64 but --hidden_width 128" init "$WORK/hf" --hidden_width 128
cp "$WORK/hf/config.json" "$WORK/bad/config.json"
sed -i 's/"rope_scaling": null/"rope_scaling": {"rope_type": "llama3", "factor": 8.0}/' "$WORK/bad/config.json"
expect_error "rope_scaling refused" "rope_scaling=" init "$WORK/bad"
cp "$WORK/hf/config.json" "$WORK/bad/config.json"
expect_error "missing dir" "--init_from_hf $WORK/none: no such directory" init "$WORK/none"
rm "$WORK/bad/config.json"
expect_error "missing config.json" "$WORK/bad/config.json: cannot read" init "$WORK/bad"
cp "$WORK/hf/config.json" "$WORK/bad/config.json"
truncate -s -100 "$WORK/bad/model.safetensors"
expect_error "truncated safetensors" "$WORK/bad/model.safetensors: tensor lm_head.weight: data" init "$WORK/bad"
printf 'garbage!' >"$WORK/bad/model.safetensors"
expect_error "not safetensors" "$WORK/bad/model.safetensors: not a safetensors file" init "$WORK/bad"
rm "$WORK/bad/model.safetensors"
expect_error "missing model.safetensors" "$WORK/bad/model.safetensors: missing" init "$WORK/bad"

# Fields wireup's Llama cannot represent: one error lists each of them.
cp "$WORK/hf/config.json" "$WORK/bad/config.json"
sed -i -e 's/"rope_scaling": null/"rope_scaling": {"rope_type": "yarn", "factor": 4.0}/' \
  -e 's/"attention_bias": false/"attention_bias": true/' -e 's/"head_dim": 16/"head_dim": 32/' \
  -e 's/"num_hidden_layers": 2/"sliding_window": 4096, "num_hidden_layers": 3/' "$WORK/bad/config.json"
set +e
out=$(init "$WORK/bad" 2>&1 >/dev/null)
rc=$?
set -e
missing=()
for needle in "$WORK/bad/config.json: fields wireup's Llama cannot represent:" \
  'rope_scaling={"factor":4.0,"rope_type":"yarn"} (wireup supports rope_type llama3 or none)' \
  "attention_bias=true" "head_dim=32" "sliding_window=4096" "does not match the model flags:" \
  "num_hidden_layers=3 but --num_layers 2"; do
  [[ $out == *"$needle"* ]] || missing+=("$needle")
done
((rc == 2 && ${#missing[@]} == 0)) && pass "unsupported fields and a mismatch: one error listing each" ||
  fail "unsupported fields: exit $rc, missing ${missing[*]} in: $out"

# Sharded checkpoints (export above --max_shard_size): they load; a missing
# shard, or an index naming a tensor its shard lacks, is named before any step.
expect_error "bad --max_shard_size" "--max_shard_size 5XB: expected a size in bytes" \
  "$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/o" --max_shard_size 5XB
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/sh" --max_shard_size 200KB >/dev/null
init "$WORK/sh" >/dev/null && pass "a sharded export imports" || fail "sharded import failed"
second=$(cd "$WORK/sh" && echo model-00002-of-*.safetensors)
cp -a "$WORK/sh" "$WORK/sh-missing"
rm "$WORK/sh-missing/$second"
expect_error "missing shard" "$WORK/sh-missing/$second: missing (model.safetensors.index.json maps" \
  init "$WORK/sh-missing"
cp -a "$WORK/sh" "$WORK/sh-wrong"
sed -i "s/\"model.norm.weight\": \"[^\"]*\"/\"model.norm.weight\": \"$second\"/" \
  "$WORK/sh-wrong/model.safetensors.index.json"
expect_error "index names a tensor its shard lacks" \
  "$WORK/sh-wrong/$second: no tensor model.norm.weight (named in model.safetensors.index.json)" \
  init "$WORK/sh-wrong"
finish
