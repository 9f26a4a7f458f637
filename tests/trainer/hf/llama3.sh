#!/usr/bin/env bash
# Llama 3.1/3.2 models through --init_from_hf and export: checkpoints written
# by Python with "llama3" rope_scaling and tied embeddings, sharded with an
# index (F32 and BF16), give wireup the loss hf_llama.py computes with HF's
# semantics; the same Python model without the scaling disagrees (so the test
# sees the scaling); export writes the tied weight once, the rope_scaling dict,
# shards above --max_shard_size; import -> export -> import is bit-exact.
source "$(dirname "$0")/lib.sh"
need_torch
hf() { "$TORCH_PY" "$HERE/hf_llama.py" "$@"; }
# tiny with Llama 3's theta; original context 64 puts the 8 rotary pairs in
# all three bands: wavelength 6.3 kept, 32 blended, 167 and up divided by 8.
scaling='{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}'
l3=(--preset tiny --rope_theta 500000 --rope_scaling 'llama3:8,1,4,64' --tie_word_embeddings 1)
common=("${l3[@]}" --synthetic_data --num_threads 1 --train_batch_size 4)
frozen=(--max_steps 1 --lr 1e-30 --min_lr 0)
tol=1e-5
make_l3() {  # DIR ARGS...
  local dir=$1
  shift
  hf make "$dir" --qk_scale 1.0 --override rope_theta 500000.0 --override rope_scaling "$scaling" "$@"
}

for dtype in F32 BF16; do
  make_l3 "$WORK/S-$dtype" --dtype "$dtype" --tied --shards 3
  [[ -e $WORK/S-$dtype/model-00003-of-00003.safetensors && ! -e $WORK/S-$dtype/model.safetensors ]] ||
    fail "$dtype: Python did not write 3 shards"
  mapfile -t ref < <(hf loss "$WORK/S-$dtype" --rows 4 --context 64 --no_scaling)
  out=$(train 1 "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/S-$dtype" \
    --checkpoint_dir "$WORK/ck-$dtype" --metrics_file "$WORK/s-$dtype.jsonl")
  [[ $out == *"[init] from_hf=$WORK/S-$dtype tensors=20 params=125248 ignored=0 tied_embeddings=tied "* ]] &&
    pass "$dtype: 3 shards through the index, 20 tensors, the embedding once" || fail "$dtype: $out"
  close "$dtype tied, rope-scaled, sharded HF checkpoint: wireup loss = HF loss" \
    "$(metric "$WORK/s-$dtype.jsonl" train 1 loss)" "${ref[0]}" $tol
  far_apart "$dtype: without the rope scaling the loss differs by far more than the tolerance (${ref[1]})" \
    "$dtype: test not sensitive to rope_scaling: ${ref[0]} vs ${ref[1]}" "${ref[0]}" "${ref[1]}"
done

# Untied and rope-scaled, one file: lm_head is its own matrix.
make_l3 "$WORK/U" --dtype F32
uref=$(hf loss "$WORK/U" --rows 4 --context 64)
train 1 "${common[@]}" --tie_word_embeddings 0 "${frozen[@]}" --init_from_hf "$WORK/U" \
  --metrics_file "$WORK/u.jsonl" >/dev/null
close "untied, rope-scaled: wireup loss = HF loss" "$(metric "$WORK/u.jsonl" train 1 loss)" "$uref" $tol

# Export: the tied weight once, config.json describing the same model, shards
# with an index above --max_shard_size (the tiny model is 504 KB in F32).
out=$("$WIREUP_TRAIN" export --checkpoint "$WORK/ck-F32" --out "$WORK/E" --max_shard_size 200KB)
[[ $out == *" tensors=20 params=125248 "*" files=3 "* ]] && pass "export: 20 tensors in 3 files" ||
  fail "export: $out"
[[ $(ls "$WORK/E") == $'config.json\nmodel-00001-of-00003.safetensors\nmodel-00002-of-00003.safetensors\nmodel-00003-of-00003.safetensors\nmodel.safetensors.index.json' ]] &&
  pass "export: shards, index and config.json, nothing else" || fail "export wrote: $(ls -A "$WORK/E")"
"$TORCH_PY" - "$WORK/E" <<'EOF' && pass "config.json and index describe the model HF would load" || fail "exported config/index"
import json, os, struct, sys
d = sys.argv[1]
c = json.load(open(os.path.join(d, "config.json")))
want = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "tie_word_embeddings": True,
        "rope_theta": 500000.0, "max_position_embeddings": 64, "torch_dtype": "float32",
        "head_dim": 16, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                         "high_freq_factor": 4.0, "original_max_position_embeddings": 64}}
bad = {k: c.get(k) for k, v in want.items() if c.get(k) != v}
assert not bad, bad
idx = json.load(open(os.path.join(d, "model.safetensors.index.json")))
wm = idx["weight_map"]
assert "lm_head.weight" not in wm and "model.embed_tokens.weight" in wm, sorted(wm)
size = 0
for f in sorted(set(wm.values())):
    b = open(os.path.join(d, f), "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n]); h.pop("__metadata__", None)
    assert all(wm[k] == f for k in h), f
    assert len(b) <= 8 + n + 200 * 1000 or len(h) == 1, f  # at most 200 KB of data, or one tensor
    size += sum(e["data_offsets"][1] - e["data_offsets"][0] for e in h.values())
assert idx["metadata"]["total_size"] == size == 125248 * 4, (idx["metadata"], size)
EOF
out=$(hf same "$WORK/S-F32" "$WORK/E") && pass "HF -> wireup -> HF: $out, bit for bit" || fail "HF -> wireup -> HF: $out"

# ... -> wireup on 2 ranks -> HF again: the same tensors; a smaller export
# replaces the shards with one model.safetensors.
train 2 "${common[@]}" "${frozen[@]}" --init_from_hf "$WORK/E" --checkpoint_dir "$WORK/ck2" >/dev/null
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck2" --out "$WORK/E" >/dev/null
[[ $(ls "$WORK/E") == $'config.json\nmodel.safetensors' ]] && pass "re-export replaces the shards" ||
  fail "re-export left: $(ls -A "$WORK/E")"
out=$(hf same "$WORK/S-F32" "$WORK/E") && pass "import -> export -> import (2 ranks) -> export: $out" ||
  fail "second round trip: $out"
"$WIREUP_TRAIN" export --checkpoint "$WORK/ck-BF16" --out "$WORK/E16" --dtype bfloat16 >/dev/null
out=$(hf same "$WORK/S-BF16" "$WORK/E16") && pass "BF16 HF -> wireup -> BF16 HF: $out" || fail "BF16: $out"
close "the exported model computes the imported one's loss" "$(hf loss "$WORK/E" --rows 4 --context 64)" \
  "$(metric "$WORK/s-F32.jsonl" train 1 loss)" $tol
finish
