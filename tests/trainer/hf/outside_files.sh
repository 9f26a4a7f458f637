#!/usr/bin/env bash
# Files from outside that lie (#25, trainer side): HF checkpoints, indexes,
# config.json and wireup checkpoints. Each is refused with exit 2 and the file
# named, within 20 s, under a 1 GiB address-space cap (ulimit -v): a FIFO is
# never waited on, a 100 MB header of brackets is refused before it is parsed
# deeper, eval bounds config.json's shapes before it builds anything, and
# safetensors are read as strictly as the reference implementation.
source "$(dirname "$0")/lib.sh"
common=(--preset tiny --synthetic_data --num_threads 1 --train_batch_size 2)
fixture() { python3 "$HERE/outside_files.py" "$@"; }
LIMIT_KB=$((1 << 20))

# refused DESCRIPTION NEEDLE COMMAND...: exit 2, NEEDLE in stderr, within 20 s, under the cap.
# The run's exit code and stderr stay in REFUSED_RC and REFUSED_OUT for said.
refused() {
  local what=$1 needle=$2 out rc t0
  shift 2
  t0=$(date +%s%N)
  set +e
  out=$( (ulimit -v "$LIMIT_KB" && exec timeout 20 "$@") 2>&1 >/dev/null)
  rc=$?
  set -e
  REFUSED_RC=$rc REFUSED_OUT=$out
  local ms=$((($(date +%s%N) - t0) / 1000000))
  if ((rc == 2)) && [[ $out == *"$needle"* ]]; then
    pass "$what (${ms} ms)"
  else
    fail "$what: exit $rc after ${ms} ms, wanted 2 and '$needle' in: $out"
  fi
}
# said DESCRIPTION NEEDLE: the last refused run (exit 2) also said NEEDLE; a second needle
# needs no second wireup-train start (each costs about a CPU-second before main).
said() {
  if ((REFUSED_RC == 2)) && [[ $REFUSED_OUT == *"$2"* ]]; then
    pass "$1"
  else
    fail "$1: exit $REFUSED_RC, wanted 2 and '$2' in: $REFUSED_OUT"
  fi
}
# The commands, as arrays (refused runs them under timeout): import, eval, export.
IMPORT=("$WIREUP_TRAIN" "${common[@]}" --max_steps 1 --init_from_hf)
EVAL=("$WIREUP_TRAIN" eval --num_threads 1 --data "$WORK/no-data" --max_context_width 32
  --eval_batches 1)
EXPORT=("$WIREUP_TRAIN" export --out "$WORK/o" --checkpoint)

train 1 "${common[@]}" --max_steps 1 --checkpoint_dir "$WORK/ck" >/dev/null
step=$WORK/ck/step-00000001
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/hf" >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/sh" --max_shard_size 200KB >/dev/null
"${IMPORT[@]}" "$WORK/hf" >/dev/null && pass "the export imports" || fail "the export does not import"

# --- safetensors that lie
for kind in overlap fraction duplicate wrap metadata nested; do
  rm -rf "${WORK:?}/${kind:?}" && cp -a "$WORK/hf" "$WORK/$kind"
  fixture safetensors "$WORK/hf/model.safetensors" "$WORK/$kind/model.safetensors" "$kind"
done
st=model.safetensors
refused "overlapping tensor data" "$WORK/overlap/$st: tensor " "${IMPORT[@]}" "$WORK/overlap"
said "overlapping tensor data: said" "(overlaps the tensor before)"
refused "a shape of 64.5" "$WORK/fraction/$st: tensor model.norm.weight: shape size 64.5 is not" \
  "${IMPORT[@]}" "$WORK/fraction"
refused "a duplicate tensor name" "$WORK/duplicate/$st: 'model.norm.weight' is named twice" \
  "${IMPORT[@]}" "$WORK/duplicate"
refused "an element count past 2^64" "$WORK/wrap/$st: tensor unused: element count passes 2^64" \
  "${IMPORT[@]}" "$WORK/wrap"
refused "a __metadata__ value that is not a string" \
  "$WORK/metadata/$st: __metadata__ value of format is not a string" "${IMPORT[@]}" "$WORK/metadata"
refused "100 MB of nested brackets" "$WORK/nested/$st: JSON nested deeper than 3 levels" \
  "${IMPORT[@]}" "$WORK/nested"
rm -rf "$WORK/after" && cp -a "$WORK/hf" "$WORK/after"
truncate -s +2G "$WORK/after/$st"  # sparse: 2 GiB after the last tensor
refused "2 GiB after the last tensor" "$WORK/after/$st: tensor data ends at byte" "${IMPORT[@]}" "$WORK/after"
said "2 GiB after the last tensor: said" "(bytes after the last tensor)"
rm -rf "$WORK/fifo" && cp -a "$WORK/hf" "$WORK/fifo" && rm "$WORK/fifo/$st" && mkfifo "$WORK/fifo/$st"
refused "model.safetensors a FIFO" "$WORK/fifo/$st: not a regular file" "${IMPORT[@]}" "$WORK/fifo"

# --- indexes that lie
idx=model.safetensors.index.json
for kind in two_shards not_string; do
  rm -rf "${WORK:?}/${kind:?}" && cp -a "$WORK/sh" "$WORK/$kind"
  fixture index "$WORK/sh/$idx" "$WORK/$kind/$idx" "$kind"
done
refused "a tensor in two shards" "$WORK/two_shards/$idx: 'model.norm.weight' is named twice" \
  "${IMPORT[@]}" "$WORK/two_shards"
refused "a non-string index value" "$WORK/not_string/$idx: weight_map maps model.norm.weight to 7" \
  "${IMPORT[@]}" "$WORK/not_string"

# --- config.json: a FIFO, a device, shapes no machine holds (eval builds nothing first)
rm -rf "$WORK/cfg" && cp -a "$WORK/hf" "$WORK/cfg" && rm "$WORK/cfg/config.json"
mkfifo "$WORK/cfg/config.json"
refused "eval: config.json a FIFO" "$WORK/cfg/config.json: not a regular file" "${EVAL[@]}" --init_from_hf "$WORK/cfg"
refused "import: config.json a FIFO" "$WORK/cfg/config.json: not a regular file" "${IMPORT[@]}" "$WORK/cfg"
rm "$WORK/cfg/config.json" && ln -s /dev/zero "$WORK/cfg/config.json"
refused "eval: config.json is /dev/zero" "$WORK/cfg/config.json: not a regular file" \
  "${EVAL[@]}" --init_from_hf "$WORK/cfg"
rm "$WORK/cfg/config.json"
fixture config "$WORK/hf/config.json" "$WORK/cfg/config.json" num_hidden_layers 1000000000
refused "eval: 10^9 layers" "$WORK/cfg/config.json: num_hidden_layers=1000000000: expected 1 to 4096" \
  "${EVAL[@]}" --init_from_hf "$WORK/cfg"
fixture config "$WORK/hf/config.json" "$WORK/cfg/big.json" num_hidden_layers 4096
fixture config "$WORK/cfg/big.json" "$WORK/cfg/bigger.json" hidden_size 65536
fixture config "$WORK/cfg/bigger.json" "$WORK/cfg/config.json" intermediate_size 262144
refused "eval: a model larger than memory" \
  "$WORK/cfg/config.json: num_hidden_layers=4096, hidden_size=65536, intermediate_size=262144 make" \
  "${EVAL[@]}" --init_from_hf "$WORK/cfg"

# --- wireup checkpoints that lie
lie() {  # KIND: a copy of the step directory whose metadata.json lies
  rm -rf "$WORK/lie" && cp -a "$step" "$WORK/lie"
  fixture metadata "$step/metadata.json" "$WORK/lie/metadata.json" "$1"
}
lie chunk_2_62
refused "export: a chunk of 2^62 elements" \
  "$WORK/lie/metadata.json: rank-00000.bin: chunk of 4611686018427387904 elements" "${EXPORT[@]}" "$WORK/lie"
refused "eval: a chunk of 2^62 elements" "$WORK/lie/metadata.json: rank-00000.bin: chunk of" \
  "${EVAL[@]}" --resume_from_checkpoint "$WORK/lie"
lie huge_vocab  # 2^24 x 64 embedding: 4 GiB, files recorded as 2^50 bytes
refused "export: shapes the rank files do not hold" \
  "$WORK/lie/rank-00000.bin: " "${EXPORT[@]}" "$WORK/lie"
refused "eval: shapes past the address-space cap" \
  "$WORK/lie/metadata.json: model.vocab=16777216, model.hidden=64 make a model of" \
  "${EVAL[@]}" --resume_from_checkpoint "$WORK/lie"
for w in 0 1000000000; do
  lie "world_$w"
  refused "world_size $w" "$WORK/lie/metadata.json: world_size $w and shard_group_size 1: expected" \
    "${EXPORT[@]}" "$WORK/lie"
done
rm -rf "$WORK/lie" && cp -a "$step" "$WORK/lie" && rm "$WORK/lie/metadata.json"
mkfifo "$WORK/lie/metadata.json"
refused "export: metadata.json a FIFO" "$WORK/lie/metadata.json: not a regular file" "${EXPORT[@]}" "$WORK/lie"
refused "eval: metadata.json a FIFO" "$WORK/lie/metadata.json: not a regular file" \
  "${EVAL[@]}" --resume_from_checkpoint "$WORK/lie"
ln -s "$WORK/loop" "$WORK/loop"
refused "export: a symlink loop" "$WORK/loop: cannot read: Too many levels of symbolic links" \
  "${EXPORT[@]}" "$WORK/loop"
refused "eval: a symlink loop" "$WORK/loop: cannot read: Too many levels of symbolic links" \
  "${EVAL[@]}" --resume_from_checkpoint "$WORK/loop"
refused "import: a symlink loop" "$WORK/loop: cannot read: Too many levels of symbolic links" \
  "${IMPORT[@]}" "$WORK/loop"
refused "eval: an HF symlink loop" "$WORK/loop: cannot read: Too many levels of symbolic links" \
  "${EVAL[@]}" --init_from_hf "$WORK/loop"
# A looping entry among the steps is not a checkpoint: the real one is taken.
ln -s step-00000009 "$WORK/ck/step-00000009"
"${EXPORT[@]}" "$WORK/ck" >/dev/null && pass "a looping step entry is passed over" ||
  fail "a looping step entry stops the export"
finish
