#!/usr/bin/python3
"""The PyTorch eager peer of `wireup-train generate`: greedy decoding with a KV cache.

A plain implementation, the way users write it (Hugging Face layout, as
transformers' LlamaForCausalLM computes it): separate q/k/v/o and
gate/up/down projections through F.linear, RMSNorm in fp32 with the
config's eps, rotate-half RoPE, grouped-query attention by repeating the KV
heads, SwiGLU, lm_head (or the tied embedding). The KV cache is preallocated
per layer; each step feeds one token. Weights from an HF directory
(config.json + model.safetensors, F32).

  decode_eager.py make DIR --vocab V --hidden H --layers L --heads N --kv_heads K
        --intermediate I --context C [--seed S]   write random F32 weights (N(0, 0.02))
  decode_eager.py run DIR --ids I,J,... --max_new N [--threads 1] [--mv]
        prefill the prompt, then N greedy steps (no stop token); --mv: a step's
        one-row projections through torch.mv (a matrix-vector product) instead of
        F.linear, which in torch 1.13 runs a one-row GEMM about 4x slower; prints
        [decode-eager] tokens=N seconds=S tokens_per_s=X ids=...
        seconds: from the prompt's prefill to the last token's argmax.

Needs Debian's python3-torch: run it with /usr/bin/python3.
"""
import argparse
import json
import math
import os
import struct
import time

import torch
import torch.nn.functional as F


def write_safetensors(path, tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    data = bytearray(blob[8 + n:])
    out = {}
    for name, e in header.items():
        assert e["dtype"] == "F32", (name, e["dtype"])
        b, end = e["data_offsets"]
        out[name] = torch.frombuffer(data, dtype=torch.float32, count=(end - b) // 4,
                                     offset=b).reshape(e["shape"])
    return out


def cmd_make(a):
    c = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=a.hidden,
             num_hidden_layers=a.layers, num_attention_heads=a.heads,
             num_key_value_heads=a.kv_heads, intermediate_size=a.intermediate,
             vocab_size=a.vocab, max_position_embeddings=a.context, rope_theta=500000.0,
             rms_norm_eps=1e-5, hidden_act="silu", tie_word_embeddings=False,
             torch_dtype="float32")
    g = torch.Generator().manual_seed(a.seed)
    H, I, V, kv = a.hidden, a.intermediate, a.vocab, a.kv_heads * a.hidden // a.heads

    def rnd(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    t = {"model.embed_tokens.weight": rnd(V, H)}
    for i in range(a.layers):
        p = f"model.layers.{i}."
        t.update({p + "input_layernorm.weight": torch.ones(H),
                  p + "self_attn.q_proj.weight": rnd(H, H), p + "self_attn.k_proj.weight": rnd(kv, H),
                  p + "self_attn.v_proj.weight": rnd(kv, H), p + "self_attn.o_proj.weight": rnd(H, H),
                  p + "post_attention_layernorm.weight": torch.ones(H),
                  p + "mlp.gate_proj.weight": rnd(I, H), p + "mlp.up_proj.weight": rnd(I, H),
                  p + "mlp.down_proj.weight": rnd(H, I)})
    t["model.norm.weight"] = torch.ones(H)
    t["lm_head.weight"] = rnd(V, H)
    os.makedirs(a.dir, exist_ok=True)
    write_safetensors(os.path.join(a.dir, "model.safetensors"), t)
    with open(os.path.join(a.dir, "config.json"), "w") as f:
        json.dump(c, f, indent=2)


class Decoder:
    def __init__(self, hf_dir, capacity, mv=False):
        self.mv = mv
        with open(os.path.join(hf_dir, "config.json")) as f:
            c = json.load(f)
        self.w = read_safetensors(os.path.join(hf_dir, "model.safetensors"))
        if c.get("tie_word_embeddings"):
            self.w["lm_head.weight"] = self.w["model.embed_tokens.weight"]
        self.c = c
        self.H, self.nh, self.kvh = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = self.H // self.nh
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(capacity, dtype=torch.float32), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()
        L = c["num_hidden_layers"]
        self.k = [torch.empty(1, self.kvh, capacity, self.hd) for _ in range(L)]
        self.v = [torch.empty(1, self.kvh, capacity, self.hd) for _ in range(L)]
        self.pos = 0

    def norm(self, x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]))

    @staticmethod
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def linear(self, x, w):
        if self.mv and x.shape[1] == 1:
            return torch.mv(w, x.reshape(-1)).view(1, 1, -1)
        return F.linear(x, w)

    def feed(self, ids):
        w, T, P = self.w, len(ids), self.pos
        S = P + T
        x = w["model.embed_tokens.weight"][torch.tensor([ids])]
        cos, sin = self.cos[P:S][None, None], self.sin[P:S][None, None]
        mask = torch.full((T, S), float("-inf")).triu(P + 1) if T > 1 else None
        rep = self.nh // self.kvh
        for i in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{i}."
            h = self.norm(x, w[p + "input_layernorm.weight"])
            q = self.linear(h, w[p + "self_attn.q_proj.weight"]).view(1, T, self.nh, self.hd).transpose(1, 2)
            k = self.linear(h, w[p + "self_attn.k_proj.weight"]).view(1, T, self.kvh, self.hd).transpose(1, 2)
            v = self.linear(h, w[p + "self_attn.v_proj.weight"]).view(1, T, self.kvh, self.hd).transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            self.k[i][:, :, P:S] = k
            self.v[i][:, :, P:S] = v
            K = self.k[i][:, :, :S].repeat_interleave(rep, dim=1)
            V = self.v[i][:, :, :S].repeat_interleave(rep, dim=1)
            s = q @ K.transpose(2, 3) / math.sqrt(self.hd)
            if mask is not None:
                s = s + mask
            a = (s.softmax(-1) @ V).transpose(1, 2).reshape(1, T, self.H)
            x = x + self.linear(a, w[p + "self_attn.o_proj.weight"])
            h = self.norm(x, w[p + "post_attention_layernorm.weight"])
            x = x + self.linear(F.silu(self.linear(h, w[p + "mlp.gate_proj.weight"])) *
                                 self.linear(h, w[p + "mlp.up_proj.weight"]), w[p + "mlp.down_proj.weight"])
        self.pos = S
        x = self.norm(x[:, -1:], w["model.norm.weight"])
        return self.linear(x, w["lm_head.weight"])[0, 0]


def cmd_run(a):
    torch.set_num_threads(a.threads)
    ids = [int(i) for i in a.ids.split(",")]
    dec = Decoder(a.dir, len(ids) + a.max_new, a.mv)
    out = []
    with torch.inference_mode():
        t0 = time.perf_counter()
        logits = dec.feed(ids)
        for n in range(a.max_new):
            nxt = int(torch.argmax(logits))
            out.append(nxt)
            if n + 1 < a.max_new:
                logits = dec.feed([nxt])
        secs = time.perf_counter() - t0
    print(f"[decode-eager] tokens={len(out)} seconds={secs:.3f} tokens_per_s={len(out) / secs:.1f} "
          f"mv={int(a.mv)} torch={torch.__version__} ids={','.join(map(str, out))}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    for k in ("vocab", "hidden", "layers", "heads", "kv_heads", "intermediate", "context"):
        m.add_argument("--" + k, type=int, required=True)
    m.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--ids", required=True)
    r.add_argument("--max_new", type=int, required=True)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--mv", action="store_true")
    a = ap.parse_args()
    {"make": cmd_make, "run": cmd_run}[a.cmd](a)


if __name__ == "__main__":
    main()
