#!/usr/bin/python3
"""A Hugging Face Llama in plain PyTorch (no transformers), for the export tests.

It follows transformers' modeling_llama.py: rotate-half RoPE, GQA by
repeat_kv, RMSNorm computed in fp32, SwiGLU MLP, untied lm_head. Weights come
from model.safetensors through a small reader (JSON header + torch.frombuffer).

  hf_llama.py loss HF_DIR --seed S --rows N --context T   mean next-token loss on
        wireup's synthetic batch of step 1 (tokens regenerated exactly as the trainer does)
  hf_llama.py same A_DIR B_DIR [--bf16]   B's tensors equal A's bit for bit
        (--bf16: A's rounded to bfloat16)
  hf_llama.py make HF_DIR --preset tiny --seed S [--qk_scale X] [--dtype F32|BF16]
        write a random HF Llama checkpoint (config.json + model.safetensors)
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


class HfLlama:
    def __init__(self, hf_dir):
        with open(os.path.join(hf_dir, "config.json")) as f:
            self.cfg = json.load(f)
        w, _ = read_safetensors(os.path.join(hf_dir, "model.safetensors"))
        self.w = {k: v.float() for k, v in w.items()}

    def rms_norm(self, x, weight):
        eps = self.cfg["rms_norm_eps"]
        var = x.float().pow(2).mean(-1, keepdim=True)
        return weight * (x.float() * torch.rsqrt(var + eps))

    @staticmethod
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def logits(self, tokens):
        c, w = self.cfg, self.w
        B, T = tokens.shape
        H, nh, kvh = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        hd = H // nh
        inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        freqs = torch.outer(torch.arange(T, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]  # [1,1,T,hd]
        x = w["model.embed_tokens.weight"][tokens]
        mask = torch.full((T, T), float("-inf")).triu(1)
        for i in range(c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = self.rms_norm(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(B, T, nh, hd).transpose(1, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(B, T, kvh, hd).transpose(1, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(B, T, kvh, hd).transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            rep = nh // kvh  # repeat_kv
            k = k[:, :, None].expand(B, kvh, rep, T, hd).reshape(B, nh, T, hd)
            v = v[:, :, None].expand(B, kvh, rep, T, hd).reshape(B, nh, T, hd)
            att = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(hd) + mask, dim=-1)
            a = (att @ v).transpose(1, 2).reshape(B, T, H)
            x = x + a @ w[p + "self_attn.o_proj.weight"].T
            h = self.rms_norm(x, w[p + "post_attention_layernorm.weight"])
            g = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            u = h @ w[p + "mlp.up_proj.weight"].T
            x = x + (g * u) @ w[p + "mlp.down_proj.weight"].T
        x = self.rms_norm(x, w["model.norm.weight"])
        return x @ w["lm_head.weight"].T

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


def cmd_same(a):
    """Exit 0 if B's tensors equal A's bit for bit (or A's rounded to bf16)."""
    ta, _ = read_safetensors(os.path.join(a.a, "model.safetensors"))
    tb, _ = read_safetensors(os.path.join(a.b, "model.safetensors"))
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
             rms_norm_eps=1e-5, hidden_act="silu", tie_word_embeddings=False,
             torch_dtype={"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[a.dtype])
    for k, v in (a.override or []):
        c[k] = json.loads(v)
    H, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    kv = c["num_key_value_heads"] * H // c["num_attention_heads"]
    g = torch.Generator().manual_seed(a.seed)

    def rnd(*shape, std=0.02):
        return torch.randn(*shape, generator=g) * std

    t = {"model.embed_tokens.weight": rnd(V, H, std=1.0)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + rnd(H, std=0.1)
        # large Q and K: sharp attention, so the rotary layout changes the loss
        t[p + "self_attn.q_proj.weight"] = rnd(H, H, std=a.qk_scale)
        t[p + "self_attn.k_proj.weight"] = rnd(kv, H, std=a.qk_scale)
        t[p + "self_attn.v_proj.weight"] = rnd(kv, H, std=0.2)
        t[p + "self_attn.o_proj.weight"] = rnd(H, H, std=0.2)
        t[p + "post_attention_layernorm.weight"] = 1 + rnd(H, std=0.1)
        t[p + "mlp.gate_proj.weight"] = rnd(I, H, std=0.1)
        t[p + "mlp.up_proj.weight"] = rnd(I, H, std=0.1)
        t[p + "mlp.down_proj.weight"] = rnd(H, I, std=0.1)
    t["model.norm.weight"] = 1 + rnd(H, std=0.1)
    t["lm_head.weight"] = rnd(V, H, std=0.2)
    t = {k: v.to(DTYPES[a.dtype]) for k, v in t.items()}
    os.makedirs(a.hf_dir, exist_ok=True)
    write_safetensors(os.path.join(a.hf_dir, "model.safetensors"), t, {"format": "pt"})
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
    m = sub.add_parser("make")
    m.add_argument("hf_dir")
    m.add_argument("--preset", default="tiny")
    m.add_argument("--seed", type=int, default=7)
    m.add_argument("--qk_scale", type=float, default=0.5)
    m.add_argument("--dtype", default="F32", choices=list(DTYPES))
    m.add_argument("--override", nargs=2, action="append", metavar=("KEY", "JSON"))
    s = sub.add_parser("same")
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--bf16", action="store_true")
    a = ap.parse_args()
    {"loss": cmd_loss, "make": cmd_make, "same": cmd_same}[a.cmd](a)


if __name__ == "__main__":
    main()
