#!/usr/bin/env bash
# The Llama 3.x path of docs/templates.md, at toy size, with Llama 3's real tokenizer:
#   1. prep-data.sbatch: raw .jsonl.zst + Meta's tokenizer.model (tests/data/vocab) ->
#      shards whose manifest says vocabulary 128256, BOS 128000, EOS 128001;
#   2. llama-fsdp.sbatch (INIT_FROM_HF, preset llama3.2-1b at a toy width, 2 nodes x 1
#      rank): starts from a Hugging Face Llama 3.2-style checkpoint (tied embeddings,
#      llama3 rope scaling; written by tests/trainer/hf/hf_llama.py) and checkpoints;
#   3. eval-export.sbatch (2 ranks): [eval] loss on the validation split and a Hugging
#      Face export whose config.json carries Llama 3.2's fields and whose files hold the
#      tied matrix once; wireup-train eval of that export (one process) gives the same
#      loss as the job's eval of the checkpoint.
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
: "${WIREUP_VOCAB_DIR:?set by ctest}"
tok=$WIREUP_VOCAB_DIR/llama3.tiktoken
[[ -f $tok ]] || { fail "no $tok: run tests/data/vocab/fetch-vocab.sh (./test.sh does)"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
train=$WIREUP_BIN_DIR/wireup-train

# Raw text as a pretraining corpus ships: JSONL compressed with zstd.
mkdir -p "$WORK/raw"
"$PYTHON" - "$WORK/raw/corpus.jsonl" <<'EOF'
import json, pathlib, sys
docs = []
for name in ("GPL-3", "Apache-2.0", "MPL-2.0", "Artistic"):
    text = pathlib.Path("/usr/share/common-licenses", name).read_text()
    docs += [p.strip() for p in text.split("\n\n") if p.strip()]
docs.append("Llama 3 처리: 데이터 준비 ✓ — émojis 👩‍💻 and <|end_of_text|> as plain text.")
with open(sys.argv[1], "w") as f:
    for d in docs:
        f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
EOF
zstd -q --rm "$WORK/raw/corpus.jsonl"

# 1. Data.
rc=$(INPUT=$WORK/raw/corpus.jsonl.zst TOKENIZER=$tok DATA_DIR=$WORK/data \
  PREP_ARGS='--val-fraction 0.2 --seed 3' run_job prep 120 -t 10 "$TEMPLATES/prep-data.sbatch")
check "prep-data.sbatch with Llama 3's tokenizer.model and .jsonl.zst input" "$rc" 0
[[ $rc == 0 ]] || { show prep; cat "$WORK/prep.err"; }
facts=$("$PYTHON" -c 'import json,sys; t=json.load(open(sys.argv[1]))["tokenizer"]; print(t["type"], t["vocab_size"], t["bos_id"], t["eos_id"])' \
  "$WORK/data/manifest.json")
check "manifest: tiktoken tokenizer, vocabulary 128256, BOS 128000, EOS 128001" "$facts" "tiktoken 128256 128000 128001"

# 2. Training from a Hugging Face Llama 3.2-style checkpoint (toy width).
scaling='{"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}'
"$PYTHON" "$here/../trainer/hf/hf_llama.py" make "$WORK/hf-in" --tied --shards 2 --override vocab_size 128256 \
  --override rope_theta 500000.0 --override rope_scaling "$scaling" \
  --override bos_token_id 128000 --override eos_token_id 128001
shape='--hidden_width 64 --num_layers 2 --num_heads 4 --num_key_value_heads 2 --intermediate_size 176 --max_context_width 64'
hf_shape=$("$PYTHON" -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"])' \
  "$WORK/hf-in/config.json")
check "the toy checkpoint has the flags' shape" "$hf_shape" "64 2 4 2 176"
rc=$(WIREUP_PRESET=llama3.2-1b INIT_FROM_HF=$WORK/hf-in DATA_DIR=$WORK/data CKPT_DIR=$WORK/ckpt \
  LOG_DIR=$WORK/logs MAX_STEPS=4 CHECKPOINT_FREQ=2 VALIDATION_FREQ=0 \
  WIREUP_TRAIN_ARGS="$shape --num_threads 1 --train_batch_size 2 --lr 1e-3 --warmup_steps 1" \
  run_job train 240 -N 2 --ntasks-per-node=1 -t 10 "$TEMPLATES/llama-fsdp.sbatch")
check "llama-fsdp.sbatch from INIT_FROM_HF trains 4 steps" "$rc" 0
[[ $rc == 0 ]] || show train
contains "it started from the Hugging Face weights, tied" "$(cat "$WORK/train.out")" "[init] from_hf=$WORK/hf-in"
contains "the run's model ties its embeddings" "$(cat "$WORK/train.out")" "tied_embeddings=tied"
expect "a complete checkpoint of step 4" test -f "$WORK/ckpt/step-00000004/metadata.json"

# 3. Eval on 2 ranks, then the export.
rc=$(CKPT_DIR=$WORK/ckpt DATA_DIR=$WORK/data EVAL_CONTEXT=64 EVAL_BATCHES=6 HF_OUT=$WORK/hf-out \
  EXPORT_DTYPE=float32 MAX_SHARD_SIZE=20MB LOG_DIR=$WORK/logs WIREUP_EVAL_ARGS='--num_threads 1' \
  run_job evalx 240 -N 2 --ntasks-per-node=1 -t 10 "$TEMPLATES/eval-export.sbatch")
check "eval-export.sbatch evaluates and exports" "$rc" 0
[[ $rc == 0 ]] || show evalx
loss=$(sed -n 's/^\[eval\] loss=\([0-9.]*\) .*windows=6$/\1/p' "$WORK/evalx.out" | head -n 1)
expect "the job printed one [eval] line over 6 windows" test -n "$loss"
cfg=$("$PYTHON" -c 'import json,sys; c=json.load(open(sys.argv[1])); r=c["rope_scaling"]
print(c["tie_word_embeddings"], c["bos_token_id"], c["eos_token_id"], c["vocab_size"], r["rope_type"], r["factor"], c["rope_theta"])' \
  "$WORK/hf-out/config.json")
check "export config.json: tied, bos/eos, vocabulary, llama3 rope scaling" "$cfg" "True 128000 128001 128256 llama3 32.0 500000.0"
expect "above MAX_SHARD_SIZE the export is sharded with an index" test -f "$WORK/hf-out/model.safetensors.index.json"
expect "the tied matrix is written once (no lm_head.weight)" \
  bash -c "! grep -q lm_head.weight '$WORK/hf-out/model.safetensors.index.json'"
again=$("$train" eval --init_from_hf "$WORK/hf-out" --data "$WORK/data" --max_context_width 64 \
  --eval_batches 6 --num_threads 1 2>&1 | sed -n 's/^\[eval\] loss=\([0-9.]*\) .*/\1/p')
check "eval of the export (1 process) = the job's eval of the checkpoint (2 ranks)" "$again" "$loss"
nodes_idle
finish
