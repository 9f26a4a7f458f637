#!/usr/bin/env bash
# A family from one folder (postnorm_family.cpp, linked into wireup-train-postnorm):
# wireup-train itself does not know it; the program that links it trains it (its
# block, not the Llama's, computes the loss), exports it under its own config.json
# and tensor names, imports the export back bit for bit, and evaluates checkpoint
# and export alike.
source "$(dirname "$0")/../hf/lib.sh"
: "${WIREUP_TRAIN_POSTNORM:?run through ctest}"
stock=$WIREUP_TRAIN
WIREUP_TRAIN=$WIREUP_TRAIN_POSTNORM  # train() and the helpers run the program with the family

# ---- wireup-train has no such family; the program that links the folder has.
set +e
out=$("$stock" --model_family postnorm --preset tiny --synthetic_data --max_steps 1 2>&1)
rc=$?
set -e
[[ $rc == 2 && $out == *"--model_family: postnorm not in {llama,qwen3,qwen2}"* ]] &&
  pass "wireup-train refuses the family it does not link" || fail "stock: rc=$rc $out"

# ---- its block is its own: the Llama's shapes, units and initial values (same seed),
# one step on the same synthetic batch, another loss.
one=(--synthetic_data --max_steps 1 --num_threads 1 --train_batch_size 2 --seed 5)
a=$(train 1 --preset tiny "${one[@]}" | losses)
b=$(train 1 --preset postnorm-tiny "${one[@]}" | losses)
[[ -n $a && -n $b && $a != "$b" ]] && pass "the post-norm GeGLU block computes another loss ($a vs $b)" ||
  fail "the same loss as the Llama's block: '$a' vs '$b'"

# ---- it learns English fortunes (the demo corpus, trainer_learns's when ready): 60
# steps take the loss from ln(1000) ~ 6.9 to about 5.8.
fixture=${WIREUP_DEMO_FIXTURE_DIR:-}
if [[ -n $fixture && -f $fixture/ready ]]; then
  corpus=$fixture/corpus
else
  : "${WIREUP_PREP:?}" "${WIREUP_DEMO_CORPUS_SCRIPT:?}"
  corpus=$WORK/corpus
  bash "$WIREUP_DEMO_CORPUS_SCRIPT" --no-install --vocab-size 1000 --prep "$WIREUP_PREP" "$corpus" >/dev/null
fi
out=$(train 2 --preset postnorm-tiny --vocab_size 1000 --max_context_width 128 --dataset "$corpus" \
  --max_steps 60 --train_batch_size 4 --lr 3e-3 --warmup_steps 10 --min_lr 3e-4 --logging_freq 10 \
  --num_threads 1 --checkpoint_dir "$WORK/ck")
first=$(sed -n 's/.*first_loss=\([0-9.]*\).*/\1/p' <<<"$out")
final=$(sed -n 's/.*final_loss=\([0-9.]*\).*/\1/p' <<<"$out")
awk -v f="$first" -v l="$final" 'BEGIN { exit !(f > 6.5 && l < 0.9 * f) }' &&
  pass "the family trains on 2 ranks: loss $first -> $final" || fail "did not learn: $first -> $final"

# ---- export: its config.json and its tensor names.
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/hf" >/dev/null
cfg=$(tr -d ' \n' <"$WORK/hf/config.json")
for kv in '"model_type":"wireup_postnorm"' '"architectures":["WireupPostNormForCausalLM"]' \
          '"hidden_act":"gelu_pytorch_tanh"' '"vocab_size":1000' '"max_position_embeddings":128'; do
  [[ $cfg == *"$kv"* ]] || fail "config.json lacks $kv: $cfg"
done
pass "config.json: the family's model_type, architecture and activation"
names=$(st_tensors "$WORK/hf/model.safetensors" | cut -d' ' -f1 | tr '\n' ' ')
[[ $names == *"model.layers.1.post_attention_layernorm.weight "* &&
   $names == *"model.layers.1.post_feedforward_layernorm.weight "* &&
   $names != *"input_layernorm"* ]] && pass "model.safetensors: the norms named after where they sit" ||
  fail "tensor names: $names"
set +e
out=$("$stock" eval --init_from_hf "$WORK/hf" --data "$corpus" --max_context_width 128 --eval_batches 1 2>&1)
rc=$?
set -e
[[ $rc == 2 && $out == *wireup_postnorm* ]] && pass "wireup-train refuses the export, naming its model_type" ||
  fail "stock eval of the export: rc=$rc $out"

# ---- import on 1 rank, a learning-rate-0 step, export again: the same bytes.
train 1 --init_from_hf "$WORK/hf" --dataset "$corpus" --max_context_width 128 --max_steps 1 --lr 1e-30 --min_lr 0 \
  --train_batch_size 4 --num_threads 1 --checkpoint_dir "$WORK/re" >"$WORK/re.log"
grep -q '^\[init\] from_hf=' "$WORK/re.log" || fail "no [init] line: $(cat "$WORK/re.log")"
"$WIREUP_TRAIN" export --checkpoint "$WORK/re" --out "$WORK/hf-re" >/dev/null
same_tensors "export -> import -> export: identical weights" "$WORK/hf" "$WORK/hf-re"

# ---- eval: the checkpoint (2 ranks) and the export (1 rank), the same bits.
ev() { local n=$1; shift; timeout 120 "$WIREUP_LAUNCH" --standalone --nproc-per-node="$n" \
  --no-prefix --local-ranks-filter=0 -- "$WIREUP_TRAIN" eval --num_threads 1 --data "$corpus" \
  --max_context_width 128 --eval_batches 8 "$@"; }
jloss() { python3 -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))["loss"]))' "$1"; }
ev 2 --resume_from_checkpoint "$WORK/ck" --metrics_file "$WORK/ck.json" >/dev/null
ev 1 --init_from_hf "$WORK/hf" --metrics_file "$WORK/hf.json" >/dev/null
x=$(jloss "$WORK/ck.json") y=$(jloss "$WORK/hf.json")
awk -v x="$x" -v f="$first" 'BEGIN { exit !(x > 0 && x < 0.9 * f) }' && [[ $x == "$y" ]] &&
  pass "eval: checkpoint on 2 ranks = export on 1 ($x), below the first training loss" ||
  fail "eval: checkpoint $x, export $y (first training loss $first)"
finish
