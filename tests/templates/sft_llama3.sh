#!/usr/bin/env bash
# sft-llama3.sbatch on the test cluster, at toy size, with Llama 3's real tokenizer:
# supervised fine-tuning learns what it is taught (tests/trainer/sft_learns.sh, here
# through the template on 2 nodes). Generated conversations give the colour of 16
# made-up things, each asked in four phrasings; a Hugging Face checkpoint (tiny
# shape, vocabulary 128256, tests/trainer/hf/hf_llama.py) is the starting point.
# The job prepares the chat data, trains from that checkpoint on 2 ranks (srun
# --wireup), evaluates the chat validation split, exports, and answers a fifth,
# held-out phrasing through wireup-train generate --chat: the starting checkpoint
# answers almost none of them, the fine-tuned one at least 15 of 16 exactly.
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/templates/sft_fixture.sh
source "$(dirname "$0")/sft_fixture.sh"
train=$WIREUP_BIN_DIR/wireup-train

"$train" generate --init_from_hf "$WORK/hf-in" --tokenizer "$tok" --chat --chat_template llama3 \
  --prompts "$WORK/ask.jsonl" --max_new_tokens 6 --num_threads 2 >"$WORK/before.jsonl" 2>"$WORK/before.err" ||
  fail "generate on the starting checkpoint: $(tail -3 "$WORK/before.err")"
before=$(exact "$WORK/before.jsonl")
if ((before >= 0 && before <= 2)); then pass "before fine-tuning: $before of 16 held-out questions answered"
else fail "before fine-tuning: $before of 16"; fi

# Bad input stops the job before any step, saying what was expected.
rc=$(INPUT=$WORK/chats.jsonl CHAT_TEMPLATE=llama2 INIT_FROM_HF=$WORK/hf-in TOKENIZER=$tok \
  DATA_DIR=$WORK/data CKPT_DIR=$WORK/ckpt LOG_DIR=$WORK/logs \
  run_job bad 60 -N 1 --ntasks-per-node=1 -t 2 "$TEMPLATES/sft-llama3.sbatch")
check "CHAT_TEMPLATE=llama2 fails the job" "$rc" 2
contains "and says what it takes" "$(cat "$WORK/bad.out")" "CHAT_TEMPLATE must be llama3 or llama3.1"
expect "before writing a data set" test ! -e "$WORK/data"

# The job: prep, train on 2 nodes, eval, export, answers.
t0=$SECONDS
rc=$(export "${SFT_SETTINGS[@]}"
  INPUT=$WORK/chats.jsonl INIT_FROM_HF=$WORK/hf-in TOKENIZER=$tok DATA_DIR=$WORK/data \
  CKPT_DIR=$WORK/ckpt LOG_DIR=$WORK/logs HF_OUT=$WORK/hf-out PROMPTS=$WORK/ask.jsonl \
  MAX_STEPS=300 CHECKPOINT_FREQ=150 MEMORY_CHECKPOINT_FREQ=100 \
  run_job sft 300 -N 2 --ntasks-per-node=1 -t 10 "$TEMPLATES/sft-llama3.sbatch")
check "sft-llama3.sbatch: prep, train, eval, export, generate ($((SECONDS - t0)) s)" "$rc" 0
[[ $rc == 0 ]] || show sft
out=$(cat "$WORK/sft.out")
contains "prepared with the llama3 chat template" "$out" "chat template llama3, train on assistant"
contains "trained on 2 ranks from the Hugging Face checkpoint" "$out" "[init] from_hf=$WORK/hf-in"
contains "as a chat data set, packed, document masking" "$out" "[data] chat data set: packed windows="
contains "with masked loss (trained_tokens)" "$out" "trained_tokens="
expect "a complete checkpoint of step 300" test -f "$WORK/ckpt/step-00000300/metadata.json"
expect "an [eval] line over the 8 validation windows" grep -qE '^\[eval\] loss=[0-9.]+ .*windows=8$' "$WORK/sft.out"
expect "the export's config.json" test -f "$WORK/hf-out/config.json"
expect "the export's weights" compgen -G "$WORK/hf-out/model*.safetensors"
answers=$(compgen -G "$WORK/logs/answers-*.jsonl" | head -n 1 || true)
expect "the answers file" test -s "$answers"
after=$(exact "$answers")
if ((after >= 15)); then pass "after fine-tuning: $after of 16 held-out questions answered exactly"
else fail "after fine-tuning: $after of 16 ($(head -c 600 "$answers" 2>/dev/null))"; fi

# LoRA through the same template (the data set kept): adapters on the frozen checkpoint,
# the eval of the LoRA checkpoint on its base, a PEFT adapter directory as the export.
rc=$(export "${SFT_SETTINGS[@]}"
  INPUT=$WORK/chats.jsonl INIT_FROM_HF=$WORK/hf-in TOKENIZER=$tok DATA_DIR=$WORK/data \
  CKPT_DIR=$WORK/ckpt-lora LOG_DIR=$WORK/logs HF_OUT=$WORK/lora-out LORA_RANK=8 \
  MAX_STEPS=20 CHECKPOINT_FREQ=20 \
  run_job lora 300 -N 2 --ntasks-per-node=1 -t 10 "$TEMPLATES/sft-llama3.sbatch")
check "sft-llama3.sbatch LORA_RANK=8: train, eval, export" "$rc" 0
[[ $rc == 0 ]] || show lora
contains "LoRA adapters on the frozen checkpoint" "$(cat "$WORK/lora.out")" "[lora] rank=8 alpha=16"
expect "an [eval] line of the LoRA checkpoint on its base" \
  grep -qE '^\[eval\] loss=[0-9.]+ .*windows=8$' "$WORK/lora.out"
expect "a PEFT adapter directory as the export" test -s "$WORK/lora-out/adapter_config.json"
expect "with the adapters' weights" test -s "$WORK/lora-out/adapter_model.safetensors"
nodes_idle
finish
