#!/usr/bin/python3
"""A Hugging Face Llama, Qwen3 and Qwen2.5 in plain PyTorch (no transformers), for the
export tests.

It follows transformers' modeling_llama.py (and, by config.json's model_type,
modeling_qwen3.py: head_dim from the config, q_norm/k_norm RMSNorm over each head before
RoPE; modeling_qwen2.py: Q/K/V biases): rotate-half RoPE (with Llama 3.1's
"llama3" rope_scaling as _compute_llama3_parameters computes it), GQA by
repeat_kv, RMSNorm computed in fp32, SwiGLU MLP, lm_head or, with
tie_word_embeddings, the embedding matrix. Weights come from model.safetensors
or the shards model.safetensors.index.json names, through a small reader (JSON
header + torch.frombuffer).

  hf_llama.py loss HF_DIR --seed S --rows N --context T [--wrong_rope] [--wrong_extras]
        [--no_scaling]
        mean next-token loss on wireup's synthetic batch of step 1 (tokens regenerated
        exactly as the trainer does); --wrong_rope, --wrong_extras, --no_scaling: a further
        line each, the loss without the import's RoPE permutation of the Q/K rows, or of
        Qwen's per-head norms and Q/K biases, or without rope_scaling
  hf_llama.py sft_loss HF_DIR DATA_DIR --context T
        a chat data set's train split (version 2 shards: tokens, conversations, loss
        mask): each conversation (its first T+1 tokens) run on its own, positions from 0;
        the mean cross-entropy over the targets whose token the mask trains
  hf_llama.py greedy HF_DIR --ids I,J,... [--ids ...] --max_new N --stop S,T,...
        greedy continuation of each prompt's ids, each token from the full forward of
        the whole sequence so far (no cache); a line per --ids (the model loaded once):
        the new ids, comma-separated, stop id left out
  hf_llama.py same A_DIR B_DIR [--bf16]   B's tensors equal A's bit for bit
        (--bf16: A's rounded to bfloat16)
  hf_llama.py make HF_DIR --preset tiny|qwen3-tiny|qwen2.5-tiny --seed S [--qk_scale X] [--dtype F32|BF16]
        [--tied] [--shards N] [--override KEY JSON]...
        write a random HF Llama checkpoint (config.json + model.safetensors, or N
        model-0000i-of-0000N.safetensors shards and model.safetensors.index.json)
"""
import argparse
import json
import math
import os
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}
PRESETS = {  # hidden, layers, heads, kv_heads, intermediate, vocab, context (wireup's presets)
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, intermediate_size=176, vocab_size=512,
                 max_position_embeddings=64),
    "qwen3-tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=176, vocab_size=512,
                       max_position_embeddings=64, head_dim=32),
    "qwen2.5-tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=176, vocab_size=512,
                         max_position_embeddings=64),
}
FAMILIES = {  # preset prefix -> what its config.json says besides the shape
    "qwen3": dict(architectures=["Qwen3ForCausalLM"], model_type="qwen3", rope_theta=1e6,
                  rms_norm_eps=1e-6, attention_bias=False, use_sliding_window=False,
                  sliding_window=None, max_window_layers=2),
    "qwen2.5": dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", rope_theta=1e6,
                    rms_norm_eps=1e-6, use_sliding_window=False, sliding_window=32768,
                    max_window_layers=2),
}


def read_safetensors(path):
    """name -> tensor (original dtype), plus the __metadata__ map."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = bytearray(blob[8 + n:])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        dt = DTYPES[e["dtype"]]
        t = torch.frombuffer(data, dtype=dt, count=(end - b) // torch.tensor([], dtype=dt).element_size(),
                             offset=b) if end > b else torch.empty(0, dtype=dt)
        out[name] = t.reshape(e["shape"]).clone()
    return out, meta


def write_safetensors(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    inv = {v: k for k, v in DTYPES.items()}
    for name, t in tensors.items():
        t = t.contiguous()
        raw = t.view(torch.uint8).numpy().tobytes() if t.dtype != torch.bfloat16 else \
            t.view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": inv[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def read_weights(hf_dir):
    """Every tensor of an HF directory: model.safetensors, or the index's shards."""
    single = os.path.join(hf_dir, "model.safetensors")
    if os.path.exists(single):
        return read_safetensors(single)[0]
    with open(os.path.join(hf_dir, "model.safetensors.index.json")) as f:
        weight_map = json.load(f)["weight_map"]
    out = {}
    for file in sorted(set(weight_map.values())):
        t, _ = read_safetensors(os.path.join(hf_dir, file))
        out.update({k: v for k, v in t.items() if weight_map.get(k) == file})
    if set(out) != set(weight_map):
        sys.exit(f"{hf_dir}: the index names tensors the shards lack")
    return out


def llama3_inv_freq(inv_freq, r):
    """transformers' _compute_llama3_parameters, in float32 as it computes."""
    factor, low, high = r["factor"], r["low_freq_factor"], r["high_freq_factor"]
    old = r["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


class HfLlama:
    """transformers' Llama, Qwen3 and Qwen2 forward, in float32 as it computes; with
    dtype=torch.float64 the same computation in float64 (a reference for values whose
    float32 rounding is itself under test)."""

    def __init__(self, hf_dir, dtype=torch.float32):
        with open(os.path.join(hf_dir, "config.json")) as f:
            self.cfg = json.load(f)
        self.dtype = dtype
        self.w = {k: v.to(dtype) for k, v in read_weights(hf_dir).items()}
        if self.cfg.get("tie_word_embeddings", False):
            self.w["lm_head.weight"] = self.w["model.embed_tokens.weight"]
        self.scaling = True

    def rms_norm(self, x, weight):
        eps = self.cfg["rms_norm_eps"]
        x = x.to(self.dtype)
        var = x.pow(2).mean(-1, keepdim=True)
        return weight * (x * torch.rsqrt(var + eps))

    @staticmethod
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def logits(self, tokens):
        c, w = self.cfg, self.w
        B, T = tokens.shape
        H, nh, kvh = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        hd = c.get("head_dim") or H // nh
        qk_norm = c.get("model_type") == "qwen3"
        inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).to(self.dtype) / hd))
        r = c.get("rope_scaling")
        if r and self.scaling:
            assert r["rope_type"] == "llama3", r
            inv_freq = llama3_inv_freq(inv_freq, r)
        freqs = torch.outer(torch.arange(T, dtype=self.dtype), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]  # [1,1,T,hd]
        x = w["model.embed_tokens.weight"][tokens]
        mask = torch.full((T, T), float("-inf"), dtype=self.dtype).triu(1)
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = self.rms_norm(x, w[p + "input_layernorm.weight"])
            q, k, v = (self.proj(h, p + f"self_attn.{n}_proj") for n in "qkv")
            q, k, v = q.view(B, T, nh, hd), k.view(B, T, kvh, hd), v.view(B, T, kvh, hd)
            if qk_norm:  # Qwen3: each head normed before RoPE
                q = self.rms_norm(q, w[p + "self_attn.q_norm.weight"])
                k = self.rms_norm(k, w[p + "self_attn.k_norm.weight"])
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            rep = nh // kvh  # repeat_kv
            k = k[:, :, None].expand(B, kvh, rep, T, hd).reshape(B, nh, T, hd)
            v = v[:, :, None].expand(B, kvh, rep, T, hd).reshape(B, nh, T, hd)
            att = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(hd) + mask, dim=-1)
            a = (att @ v).transpose(1, 2).reshape(B, T, nh * hd)
            x = x + self.proj(a, p + "self_attn.o_proj")
            h = self.rms_norm(x, w[p + "post_attention_layernorm.weight"])
            g = torch.nn.functional.silu(self.proj(h, p + "mlp.gate_proj"))
            u = self.proj(h, p + "mlp.up_proj")
            x = x + self.proj(g * u, p + "mlp.down_proj")
        x = self.rms_norm(x, w["model.norm.weight"])
        return x @ w["lm_head.weight"].T

    def proj(self, x, name):
        """x W^T, + b where the file has a bias (Qwen2's Q, K and V): every linear
        projection of a layer (self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj), so a
        subclass can add to it (tests/trainer/lora/peft_adapter.py: LoRA's update)."""
        y = x @ self.w[name + ".weight"].T
        return y + self.w[name + ".bias"] if name + ".bias" in self.w else y

    def loss(self, tokens):
        logits = self.logits(tokens[:, :-1])
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1)).item()


def synthetic_tokens(seed, step, rows, context, vocab):
    """wireup's --synthetic_data batch of one optimizer step (all ranks' rows)."""
    g = torch.Generator().manual_seed(seed * 7919 + (step - 1))
    return torch.randint(vocab, (rows, context + 1), generator=g, dtype=torch.long)


def meta_to_hf_rows(w, n_heads):
    """Meta's pair order -> HF's half order, per head (transformers' conversion script)."""
    rows, cols = w.shape
    return w.view(n_heads, rows // n_heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def cmd_loss(a):
    torch.set_num_threads(1)
    model = HfLlama(a.hf_dir)
    tokens = synthetic_tokens(a.seed, 1, a.rows, a.context, model.cfg["vocab_size"])
    with torch.no_grad():
        print(f"{model.loss(tokens):.9g}")
        if a.wrong_rope:
            # What a missing inverse permutation on import would compute.
            c = model.cfg
            for i in range(c["num_hidden_layers"]):
                p = f"model.layers.{i}.self_attn."
                model.w[p + "q_proj.weight"] = meta_to_hf_rows(model.w[p + "q_proj.weight"],
                                                               c["num_attention_heads"])
                model.w[p + "k_proj.weight"] = meta_to_hf_rows(model.w[p + "k_proj.weight"],
                                                               c["num_key_value_heads"])
            print(f"{model.loss(tokens):.9g}")
        if a.wrong_extras:
            # What a missing permutation of Qwen's per-head norms and Q/K biases would
            # compute (their elements follow the Q/K rows' order).
            c = model.cfg
            for i in range(c["num_hidden_layers"]):
                p = f"model.layers.{i}.self_attn."
                for name, heads in (("q_norm.weight", 1), ("k_norm.weight", 1),
                                    ("q_proj.bias", c["num_attention_heads"]),
                                    ("k_proj.bias", c["num_key_value_heads"])):
                    if p + name in model.w:
                        t = model.w[p + name]
                        model.w[p + name] = meta_to_hf_rows(t.view(-1, 1), heads).reshape(-1)
            print(f"{model.loss(tokens):.9g}")
        if a.no_scaling:
            # What a model without Llama 3.1's rope scaling would compute.
            model.scaling = False
            print(f"{model.loss(tokens):.9g}")


def read_conversations(path):
    """(tokens, mask) of each conversation of a version 2 shard (docs/data-format.md)."""
    with open(path, "rb") as f:
        blob = f.read()
    magic, version, width = struct.unpack_from("<8sII", blob, 0)
    assert magic == b"WUTOKENS" and version == 2, path
    count, docs, tokens_off, index_off, mask_off = struct.unpack_from("<QQQQQ", blob, 32)
    tokens = struct.unpack_from("<%d%s" % (count, "H" if width == 2 else "I"), blob, tokens_off)
    index = struct.unpack_from("<%dQ" % (docs + 1), blob, index_off)
    mask = [(blob[mask_off + i // 8] >> (i % 8)) & 1 for i in range(count)]
    return [(list(tokens[index[d]:index[d + 1]]), mask[index[d]:index[d + 1]])
            for d in range(docs)]


def cmd_sft_loss(a):
    torch.set_num_threads(1)
    mean, trained = sft_loss(HfLlama(a.hf_dir), a.data_dir, a.context)
    print(f"{mean:.9g} {trained}")


def sft_loss(model, data_dir, context):
    """(mean loss over the trained targets, their count) of a chat data set's train split."""
    with open(os.path.join(data_dir, "manifest.json")) as f:
        shards = json.load(f)["splits"]["train"]["shards"]
    total, trained = 0.0, 0
    with torch.no_grad():
        for shard in shards:
            for tokens, mask in read_conversations(os.path.join(data_dir, shard["file"])):
                tokens, mask = tokens[:context + 1], mask[:context + 1]
                t = torch.tensor([tokens], dtype=torch.long)
                logits = model.logits(t[:, :-1])[0]
                ce = torch.nn.functional.cross_entropy(logits, t[0, 1:], reduction="none")
                keep = torch.tensor(mask[1:], dtype=torch.bool)
                total += ce[keep].double().sum().item()
                trained += int(keep.sum())
    return total / trained, trained


def cmd_greedy(a):
    torch.set_num_threads(1)
    model = HfLlama(a.hf_dir)
    stop = {int(i) for i in a.stop.split(",") if i}
    for prompt in a.ids:
        ids = [int(i) for i in prompt.split(",")]
        out = []
        with torch.no_grad():
            while len(out) < a.max_new and len(ids) < model.cfg["max_position_embeddings"]:
                logits = model.logits(torch.tensor([ids]))[0, -1]
                nxt = int(torch.argmax(logits))  # the first of equal maxima, as wireup's
                if nxt in stop:
                    break
                out.append(nxt)
                ids.append(nxt)
        print(",".join(str(i) for i in out))


def cmd_same(a):
    """Exit 0 if B's tensors equal A's bit for bit (or A's rounded to bf16)."""
    ta, tb = read_weights(a.a), read_weights(a.b)
    bad = sorted(set(ta) ^ set(tb))
    for name in sorted(set(ta) & set(tb)):
        x, y = ta[name], tb[name]
        if a.bf16:
            x = x.to(torch.bfloat16)
        if x.dtype != y.dtype or x.shape != y.shape or not torch.equal(
                x.view(torch.int16 if x.element_size() == 2 else torch.int32),
                y.view(torch.int16 if y.element_size() == 2 else torch.int32)):
            bad.append(name)
    if bad:
        print("differ:", " ".join(bad[:10]), f"({len(bad)} of {len(ta)})")
        sys.exit(1)
    print(f"same {len(ta)} tensors")


def cmd_make(a):
    c = dict(PRESETS[a.preset])
    c.update(architectures=["LlamaForCausalLM"], model_type="llama", rope_theta=10000.0,
             rms_norm_eps=1e-5, hidden_act="silu", tie_word_embeddings=a.tied,
             torch_dtype={"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[a.dtype])
    c.update(FAMILIES.get(a.preset.split("-")[0], {}))
    for k, v in (a.override or []):
        c[k] = json.loads(v)
    H, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim") or H // c["num_attention_heads"]
    Q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    g = torch.Generator().manual_seed(a.seed)

    def rnd(*shape, std=0.02):
        return torch.randn(*shape, generator=g) * std

    t = {"model.embed_tokens.weight": rnd(V, H, std=1.0)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + rnd(H, std=0.1)
        # large Q and K: sharp attention, so the rotary layout changes the loss
        t[p + "self_attn.q_proj.weight"] = rnd(Q, H, std=a.qk_scale)
        t[p + "self_attn.k_proj.weight"] = rnd(kv, H, std=a.qk_scale)
        t[p + "self_attn.v_proj.weight"] = rnd(kv, H, std=0.2)
        t[p + "self_attn.o_proj.weight"] = rnd(H, Q, std=0.2)
        if c["model_type"] == "qwen2":
            for n, rows in (("q", Q), ("k", kv), ("v", kv)):
                t[p + f"self_attn.{n}_proj.bias"] = rnd(rows, std=0.5)
        if c["model_type"] == "qwen3":  # per-head norms with weights far from 1
            t[p + "self_attn.q_norm.weight"] = 1 + rnd(hd, std=2.0)
            t[p + "self_attn.k_norm.weight"] = 1 + rnd(hd, std=2.0)
        t[p + "post_attention_layernorm.weight"] = 1 + rnd(H, std=0.1)
        t[p + "mlp.gate_proj.weight"] = rnd(I, H, std=0.1)
        t[p + "mlp.up_proj.weight"] = rnd(I, H, std=0.1)
        t[p + "mlp.down_proj.weight"] = rnd(H, I, std=0.1)
    t["model.norm.weight"] = 1 + rnd(H, std=0.1)
    if a.tied:  # the output projection is the embedding: no lm_head in the file
        t["model.embed_tokens.weight"] *= 0.2
    else:
        t["lm_head.weight"] = rnd(V, H, std=0.2)
    t = {k: v.to(DTYPES[a.dtype]) for k, v in t.items()}
    os.makedirs(a.hf_dir, exist_ok=True)
    if a.shards <= 1:
        write_safetensors(os.path.join(a.hf_dir, "model.safetensors"), t, {"format": "pt"})
    else:  # transformers' layout: tensors in order, N files, an index
        names = list(t)
        weight_map = {}
        for i in range(a.shards):
            part = names[i * len(names) // a.shards:(i + 1) * len(names) // a.shards]
            file = f"model-{i + 1:05d}-of-{a.shards:05d}.safetensors"
            write_safetensors(os.path.join(a.hf_dir, file), {k: t[k] for k in part},
                              {"format": "pt"})
            weight_map.update({k: file for k in part})
        total = sum(v.numel() * v.element_size() for v in t.values())
        with open(os.path.join(a.hf_dir, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    with open(os.path.join(a.hf_dir, "config.json"), "w") as f:
        json.dump(c, f, indent=2)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    l = sub.add_parser("loss")
    l.add_argument("hf_dir")
    l.add_argument("--seed", type=int, default=1234)
    l.add_argument("--rows", type=int, required=True)
    l.add_argument("--context", type=int, required=True)
    l.add_argument("--wrong_rope", action="store_true")
    l.add_argument("--wrong_extras", action="store_true")
    l.add_argument("--no_scaling", action="store_true")
    m = sub.add_parser("make")
    m.add_argument("hf_dir")
    m.add_argument("--preset", default="tiny")
    m.add_argument("--seed", type=int, default=7)
    m.add_argument("--qk_scale", type=float, default=0.5)
    m.add_argument("--dtype", default="F32", choices=list(DTYPES))
    m.add_argument("--override", nargs=2, action="append", metavar=("KEY", "JSON"))
    m.add_argument("--tied", action="store_true")
    m.add_argument("--shards", type=int, default=1)
    f = sub.add_parser("sft_loss")
    f.add_argument("hf_dir")
    f.add_argument("data_dir")
    f.add_argument("--context", type=int, required=True)
    g = sub.add_parser("greedy")
    g.add_argument("hf_dir")
    g.add_argument("--ids", required=True, action="append", help="a prompt's ids; repeatable")
    g.add_argument("--max_new", type=int, required=True)
    g.add_argument("--stop", default="")
    s = sub.add_parser("same")
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--bf16", action="store_true")
    a = ap.parse_args()
    {"loss": cmd_loss, "make": cmd_make, "same": cmd_same, "sft_loss": cmd_sft_loss,
     "greedy": cmd_greedy}[a.cmd](a)


if __name__ == "__main__":
    main()
