#!/usr/bin/env bash
# wireup-train generate on tiny Llamas with Llama 3's real tokenizer: greedy
# decoding through the KV cache gives, token for token, the ids the plain
# PyTorch HF Llama (hf/hf_llama.py, which recomputes the whole sequence for
# each token) gives, untied and tied + rope-scaled; sampling is the same for a
# seed and differs across seeds; a tiny top_p is greedy; --chat feeds the
# template's user turn and generation prompt (ids against wireup_chat_render,
# i.e. ChatEncoder); a checkpoint and its export generate the same; the
# context ends a run; --dtype bfloat16 runs (the output's shape); bad input is exit 2
# naming the flag.
# shellcheck source=../hf/lib.sh
source "$(dirname "$0")/../hf/lib.sh"
need_torch
: "${WIREUP_VOCAB_DIR:?}" "${WIREUP_CHAT_RENDER:?}"
TOK=$WIREUP_VOCAB_DIR/llama3.tiktoken
[[ -f $TOK ]] || { echo "FAIL: $TOK missing (tests/data/vocab/fetch-vocab.sh)" >&2; exit 1; }
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
gen() { "$WIREUP_TRAIN" generate --tokenizer "$TOK" --num_threads 1 "$@"; }
field() {  # FIELD < JSONL: the field of each line, lists comma-joined
  python3 -c '
import json, sys
for line in sys.stdin:
    v = json.loads(line)[sys.argv[1]]
    print(",".join(map(str, v)) if isinstance(v, list) else v)' "$1"
}
STOP=128001,128009
V=(--override vocab_size 128256)
printf '%s\n' '{"prompt": "The capital of France is"}' '{"prompt": "1, 2, 3,"}' \
  '{"prompt": "Hello"}' >"$WORK/prompts.jsonl"

# Greedy, token for token against the Python HF Llama.
hf make "$WORK/plain" "${V[@]}"
hf make "$WORK/l3" "${V[@]}" --tied --qk_scale 1.0 --override rope_theta 500000.0 \
  --override rope_scaling '{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}'
for model in plain l3; do
  gen --init_from_hf "$WORK/$model" --prompts "$WORK/prompts.jsonl" --max_new_tokens 20 \
    --show_ids >"$WORK/$model.jsonl" 2>"$WORK/$model.err" || fail "$model: exit $?: $(cat "$WORK/$model.err")"
  check "$model: one line a prompt" "$(wc -l <"$WORK/$model.jsonl")" 3
  mapfile -t prompt_ids < <(field prompt_ids <"$WORK/$model.jsonl")
  mapfile -t ids < <(field ids <"$WORK/$model.jsonl")
  mapfile -t greedy < <(hf greedy "$WORK/$model" "${prompt_ids[@]/#/--ids=}" --max_new 20 --stop "$STOP")
  for i in 0 1 2; do
    check "$model prompt $i: greedy ids = HF Llama's (${ids[$i]:0:40}...)" "${ids[$i]}" "${greedy[$i]-none}"
  done
  contains "$model: summary" "$(cat "$WORK/$model.err")" "[generate] prompts=3 tokens="
done
lacks "stdout holds only the completions" "$(cat "$WORK/plain.jsonl")" "[init]"
check "plain prompt: <|begin_of_text|> + the text's ids" "$(field prompt_ids <"$WORK/plain.jsonl" | sed -n 3p)" \
  "128000,9906"
# --prompt prints the completion text: the decoded ids of the JSON line.
one=$(gen --init_from_hf "$WORK/plain" --prompt "Hello" --max_new_tokens 20 2>/dev/null)
check "--prompt prints the completion" "$one" "$(field completion <"$WORK/plain.jsonl" | sed -n 3p)"
# --dtype bfloat16 (weights and KV cache): on this random model the logits' margins are
# below bf16's rounding, so only the output's shape is checked here (sft_learns.sh checks
# that a trained model answers the same as in float32).
gen --init_from_hf "$WORK/l3" --prompts "$WORK/prompts.jsonl" --max_new_tokens 20 --show_ids \
  --dtype bfloat16 >"$WORK/bf16.jsonl" 2>"$WORK/bf16.err" || fail "bfloat16: $(cat "$WORK/bf16.err")"
check "bfloat16: one line a prompt, 20 tokens each, ids in the vocabulary" "$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(len(rows), all(r["tokens"] == len(r["ids"]) == 20 and r["stop"] == "max_new_tokens"
                     and all(0 <= i < 128256 for i in r["ids"]) for r in rows))' "$WORK/bf16.jsonl")" "3 True"
check "bfloat16: the same prompt ids" "$(field prompt_ids <"$WORK/bf16.jsonl")" "$(field prompt_ids <"$WORK/l3.jsonl")"

# Sampling: a seed repeats, another seed differs; top_p 1e-9 keeps one token: greedy. 8 new
# tokens a prompt (a sampled token sorts the 128256 logits): at temperature 1.5 this random
# model's 0.95 nucleus holds about 91000 tokens, its likeliest under 0.1%, so two seeds (or a
# seed and greedy) agreeing on all 3 x 8 tokens is out of reach.
s=(--init_from_hf "$WORK/plain" --prompts "$WORK/prompts.jsonl" --max_new_tokens 8 --temperature 1.5)
gen "${s[@]}" --top_p 0.95 --seed 5 >"$WORK/s5a.jsonl" 2>/dev/null
gen "${s[@]}" --top_p 0.95 --seed 5 >"$WORK/s5b.jsonl" 2>/dev/null
gen "${s[@]}" --top_p 0.95 --seed 6 >"$WORK/s6.jsonl" 2>/dev/null
gen "${s[@]}" --top_p 1e-9 --seed 5 --show_ids >"$WORK/nucleus1.jsonl" 2>/dev/null
check "seed 5 twice: identical" "$(cat "$WORK/s5b.jsonl")" "$(cat "$WORK/s5a.jsonl")"
[[ $(cat "$WORK/s5a.jsonl") != "$(cat "$WORK/s6.jsonl")" ]] && pass "seeds 5 and 6 differ" ||
  fail "seeds 5 and 6 gave the same completions"
# The greedy reference: the first run's ids, checked against HF's above, to 8 tokens.
check "a one-token nucleus is greedy" "$(field ids <"$WORK/nucleus1.jsonl")" \
  "$(field ids <"$WORK/plain.jsonl" | cut -d, -f1-8)"
[[ -s $WORK/s5a.jsonl && $(field completion <"$WORK/s5a.jsonl") != "$(field completion <"$WORK/nucleus1.jsonl")" ]] &&
  pass "sampled differs from greedy (as many tokens)" || fail "temperature 1.5 gave the greedy completions"

# --chat: the user turn as ChatEncoder encodes it, then the assistant header.
gen --init_from_hf "$WORK/plain" --chat --prompt " What is 2+2? " --max_new_tokens 3 --show_ids \
  >"$WORK/chat.jsonl" 2>/dev/null
turn=$(echo '{"messages": [{"role": "user", "content": " What is 2+2? "}, {"role": "assistant", "content": "4"}]}' |
  "$WIREUP_CHAT_RENDER" "$TOK" llama3 assistant | field ids | python3 -c '
import sys
ids = sys.stdin.read().strip().split(",")
print(",".join(ids[:ids.index("128009") + 1]))')
check "--chat: ChatEncoder's user turn + <|start_header_id|>assistant<|end_header_id|>\\n\\n" \
  "$(field prompt_ids <"$WORK/chat.jsonl")" "$turn,128006,78191,128007,271"
gen --init_from_hf "$WORK/plain" --chat --chat_template llama3.1 --prompt "Hi" --max_new_tokens 1 \
  --show_ids >"$WORK/chat31.jsonl" 2>/dev/null
contains "--chat_template llama3.1: the system block first" "$(field prompt_ids <"$WORK/chat31.jsonl")" \
  "128000,128006,9125,128007,271"

# Qwen3: the template named by the HF directory's tokenizer_config.json (the
# published one), --enable_thinking 0; the prompt's ids those of Hugging Face's
# tokenizer (the npm package's JavaScript port) on the published template's
# text with the generation prompt and enable_thinking=false.
QDIR=$WIREUP_VOCAB_DIR/qwen3
if [[ -f $QDIR/tokenizer.json ]] && command -v node >/dev/null; then
  hf make "$WORK/q3" --preset qwen3-tiny --override vocab_size 151936
  cp "$QDIR/tokenizer_config.json" "$WORK/q3/"
  "$WIREUP_TRAIN" generate --tokenizer "$QDIR/tokenizer.json" --num_threads 1 --init_from_hf "$WORK/q3" \
    --chat --enable_thinking 0 --prompt "Hi there" --max_new_tokens 2 --show_ids >"$WORK/q3.jsonl" \
    2>"$WORK/q3.err" || fail "qwen3 generate: $(cat "$WORK/q3.err")"
  contains "qwen3: the template from tokenizer_config.json" "$(cat "$WORK/q3.err")" \
    "[generate] chat_template=qwen3 ($WORK/q3/tokenizer_config.json)"
  text='<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n'
  want=$(printf '["%s"]' "$text" | node "$(dirname "$0")/../../data/vocab/qwen3_reference.js" "$QDIR" |
    python3 -c 'import json, sys; print(",".join(map(str, json.load(sys.stdin)["published"][0])))')
  check "qwen3 --enable_thinking 0: the published template's prompt, HF's ids" \
    "$(field prompt_ids <"$WORK/q3.jsonl")" "$want"
  contains "qwen3: ids of <|im_start|> ... <think> </think>" "$want" "151644,"
  contains "qwen3: the empty reasoning block" "$want" "151667,"
else
  echo "note: no Qwen3 tokenizer or node here: generate --chat with qwen3 is not checked"
fi

# A wireup checkpoint generates as its export does.
"$WIREUP_TRAIN" --preset tiny --vocab_size 128256 --synthetic_data --num_threads 1 --max_steps 2 \
  --train_batch_size 2 --checkpoint_dir "$WORK/ck" --checkpoint_freq 2 >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck" --out "$WORK/ck-hf" >/dev/null
a=$(gen --resume_from_checkpoint "$WORK/ck" --prompts "$WORK/prompts.jsonl" --max_new_tokens 8 --show_ids 2>"$WORK/ck.err")
b=$(gen --init_from_hf "$WORK/ck-hf" --prompts "$WORK/prompts.jsonl" --max_new_tokens 8 --show_ids 2>/dev/null)
check "--resume_from_checkpoint = its export" "$a" "$b"
contains "checkpoint: load line on stderr" "$(cat "$WORK/ck.err")" "[init] from_checkpoint="

# The context (64) ends a run: 1 + 9 prompt tokens leave 54 (a sequence never passes it).
out=$(gen --init_from_hf "$WORK/plain" --prompt "a b c d e f g h i" --max_new_tokens 1000 --show_ids 2>/dev/null)
check "context: stop" "$(field stop <<<"$out")" context
check "context: 64 tokens in all" "$(($(field tokens <<<"$out") + 10))" 64

# Bad input: exit 2, the flag named.
bad() {  # DESCRIPTION WHAT ARGS...
  local desc=$1 what=$2 err rc=0
  shift 2
  err=$("$WIREUP_TRAIN" generate "$@" 2>&1 >/dev/null) || rc=$?
  check "$desc: exit 2" "$rc" 2
  contains "$desc: names it" "$err" "$what"
}
H=(--init_from_hf "$WORK/plain")
bad "no tokenizer" "--tokenizer" "${H[@]}" --prompt x --max_new_tokens 2
bad "tokenizer missing" "--tokenizer: tokenizer '$WORK/none'" "${H[@]}" --tokenizer "$WORK/none" --prompt x --max_new_tokens 2
bad "both prompts" "not both" "${H[@]}" --tokenizer "$TOK" --prompt x --prompts "$WORK/prompts.jsonl" --max_new_tokens 2
bad "no prompt" "--prompt TEXT or --prompts FILE" "${H[@]}" --tokenizer "$TOK" --max_new_tokens 2
bad "max_new_tokens 0" "--max_new_tokens 0" "${H[@]}" --tokenizer "$TOK" --prompt x --max_new_tokens 0
bad "temperature < 0" "--temperature -1" "${H[@]}" --tokenizer "$TOK" --prompt x --max_new_tokens 2 --temperature -1
bad "top_p 0" "--top_p 0" "${H[@]}" --tokenizer "$TOK" --prompt x --max_new_tokens 2 --top_p 0
bad "top_p 1.5" "--top_p 1.5" "${H[@]}" --tokenizer "$TOK" --prompt x --max_new_tokens 2 --top_p 1.5
bad "dtype float16" "--dtype" "${H[@]}" --tokenizer "$TOK" --prompt x --max_new_tokens 2 --dtype float16
long="$(printf 'word %.0s' $(seq 99))word"  # 100 tokens
bad "prompt past the context" "--prompt: 101 tokens, and the model's context is 64" "${H[@]}" \
  --tokenizer "$TOK" --prompt "$long" --max_new_tokens 2
echo "{\"prompt\": \"$long\"}" >>"$WORK/prompts.jsonl"
bad "a prompt of the file past the context" "prompt 4: 101 tokens" "${H[@]}" --tokenizer "$TOK" \
  --prompts "$WORK/prompts.jsonl" --max_new_tokens 2
hf make "$WORK/small-vocab"
bad "tokenizer larger than the model's vocabulary" "more than the model's vocab_size 512" \
  --init_from_hf "$WORK/small-vocab" --tokenizer "$TOK" --prompt x --max_new_tokens 2
bad "no weights" "exactly one of --init_from_hf" --tokenizer "$TOK" --prompt x --max_new_tokens 2
# A SentencePiece model (wireup-prep trains one; Llama 2's kind): served by a
# child wireup-prep, its ids and text those of Debian's spm_encode/spm_decode.
if [[ -x ${WIREUP_PREP:-} ]] && command -v spm_encode >/dev/null; then
  for i in $(seq 300); do echo "the quick brown fox $i jumps over the lazy dog, line $i of the corpus"; done >"$WORK/corpus.txt"
  "$WIREUP_PREP" --vocab-size 320 --val-fraction 0 -q -o "$WORK/sp" "$WORK/corpus.txt"
  SP=$WORK/sp/tokenizer.model
  hf make "$WORK/sp-model" --override vocab_size 320
  "$WIREUP_TRAIN" generate --tokenizer "$SP" --num_threads 1 --init_from_hf "$WORK/sp-model" \
    --prompt "the lazy dog jumps" --max_new_tokens 8 --show_ids >"$WORK/sp.jsonl" 2>"$WORK/sp.err" ||
    fail "SentencePiece generate: $(cat "$WORK/sp.err")"
  want=$(spm_encode --model "$SP" --output_format id <<<"the lazy dog jumps" | tr ' ' ',')
  check "SentencePiece: the prompt's ids are <s> + spm_encode's" "$(field prompt_ids <"$WORK/sp.jsonl")" "1,$want"
  new_ids=$(field ids <"$WORK/sp.jsonl")
  check "SentencePiece: 8 new ids" "$(tr ',' '\n' <<<"$new_ids" | wc -l)" 8
  check "SentencePiece: the completion is spm_decode's text of its ids" \
    "$(field completion <"$WORK/sp.jsonl")" "$(tr ',' ' ' <<<"$new_ids" | spm_decode --model "$SP" --input_format id)"
  bad "--chat with a SentencePiece model" "is a SentencePiece model, which has none of the chat" \
    --init_from_hf "$WORK/sp-model" --tokenizer "$SP" --chat --prompt x --max_new_tokens 2
  bad "a file that is no tokenizer" "--tokenizer $WORK/corpus.txt" \
    --init_from_hf "$WORK/sp-model" --tokenizer "$WORK/corpus.txt" --prompt x --max_new_tokens 2
else
  echo "note: no wireup-prep or spm_encode here: generate with SentencePiece is not checked"
fi
finish
