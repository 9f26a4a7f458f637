# shellcheck shell=bash
# What the sft-llama3.sbatch tests share (sourced after lib.sh): Llama 3's real
# tokenizer ($tok); the facts (tests/trainer/sft_facts.py, as trainer_sft_learns
# teaches them: $WORK/chats.jsonl and the held-out phrasing $WORK/ask.jsonl);
# exact ANSWERS.JSONL, how many completions equal their answer (case and spaces
# aside); the starting checkpoint $WORK/hf-in, a random tiny Llama with Llama 3's
# vocabulary (tests/trainer/hf/hf_llama.py); and SFT_SETTINGS, the template's
# CPU-scale settings for 2 ranks (run with: export "${SFT_SETTINGS[@]}").
: "${WIREUP_VOCAB_DIR:?set by ctest}"
tok=$WIREUP_VOCAB_DIR/llama3.tiktoken
[[ -f $tok ]] || { fail "no $tok: run tests/data/vocab/fetch-vocab.sh (./test.sh does)"; exit 1; }
sft_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

facts() { "$PYTHON" "$sft_here/../trainer/sft_facts.py" "$@"; }
facts make "$WORK" --repeat 7 --rows messages --out chats.jsonl
exact() { facts score "$1" "$WORK/answers.txt"; }

"$PYTHON" "$sft_here/../trainer/hf/hf_llama.py" make "$WORK/hf-in" --override vocab_size 128256 \
  --override bos_token_id 128000 --override eos_token_id 128001

# shellcheck disable=SC2034  # used by the scripts that source this
SFT_SETTINGS=(CHAT_TEMPLATE=llama3 WIREUP_PRESET=tiny "PREP_ARGS=--val-fraction 0.1 --seed 3"
  EXPORT_DTYPE=float32 VALIDATION_FREQ=0 EVAL_CONTEXT=64 EVAL_BATCHES=8
  "WIREUP_EVAL_ARGS=--num_threads 1" MAX_NEW_TOKENS=6 "GENERATE_ARGS=--num_threads 2"
  "WIREUP_TRAIN_ARGS=--num_threads 1 --max_context_width 64 --train_batch_size 4 --lr 3e-3 --warmup_steps 20 --min_lr 3e-4 --seed 3 --epochs 1000 --logging_freq 50")
