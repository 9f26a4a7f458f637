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
: "${WIREUP_VOCAB_DIR:?set by ctest}"
tok=$WIREUP_VOCAB_DIR/llama3.tiktoken
[[ -f $tok ]] || { fail "no $tok: run tests/data/vocab/fetch-vocab.sh (./test.sh does)"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
train=$WIREUP_BIN_DIR/wireup-train

# The facts (tests/trainer/sft_facts.py: as trainer_sft_learns teaches them).
facts() { "$PYTHON" "$here/../trainer/sft_facts.py" "$@"; }
facts make "$WORK" --repeat 7 --rows messages --out chats.jsonl
# exact ANSWERS.JSONL: how many completions equal their answer (case and spaces aside).
exact() { facts score "$1" "$WORK/answers.txt"; }

# The starting checkpoint: a random tiny Llama with Llama 3's vocabulary.
"$PYTHON" "$here/../trainer/hf/hf_llama.py" make "$WORK/hf-in" --override vocab_size 128256 \
  --override bos_token_id 128000 --override eos_token_id 128001
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
rc=$(INPUT=$WORK/chats.jsonl CHAT_TEMPLATE=llama3 INIT_FROM_HF=$WORK/hf-in TOKENIZER=$tok \
  WIREUP_PRESET=tiny DATA_DIR=$WORK/data PREP_ARGS='--val-fraction 0.1 --seed 3' \
  CKPT_DIR=$WORK/ckpt LOG_DIR=$WORK/logs HF_OUT=$WORK/hf-out EXPORT_DTYPE=float32 \
  MAX_STEPS=300 CHECKPOINT_FREQ=150 VALIDATION_FREQ=0 EVAL_CONTEXT=64 EVAL_BATCHES=8 \
  WIREUP_EVAL_ARGS='--num_threads 1' PROMPTS=$WORK/ask.jsonl MAX_NEW_TOKENS=6 \
  GENERATE_ARGS='--num_threads 2' \
  WIREUP_TRAIN_ARGS='--num_threads 1 --max_context_width 64 --train_batch_size 4 --lr 3e-3 --warmup_steps 20 --min_lr 3e-4 --seed 3 --epochs 1000 --logging_freq 50' \
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
nodes_idle
finish
