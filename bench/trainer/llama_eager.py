#!/usr/bin/python3
"""The PyTorch eager peer of wireup-train: the same Llama, batch and optimizer.

A plain implementation, the way users write it (Meta/torchtitan style):
separate bias-free Linear layers for wq/wk/wv/wo and w1/w2/w3, RMSNorm with
eps 1e-5, Meta's interleaved RoPE through complex numbers, grouped-query
attention by repeating the KV heads, SwiGLU, an untied output head (tied with --tie), the
causal scaled-dot-product attention kernel, cross-entropy, gradient clipping
at 1.0 and torch.optim.AdamW(lr 3e-4, weight decay 0.1, betas (0.9, 0.95)).
Init: N(0, 0.02), wo and w2 scaled by 1/sqrt(2 * layers), norm weights 1.

Single process by default; with WORLD_SIZE > 1 in the environment it runs
DistributedDataParallel over Gloo (init_method env://), each rank with its own
batch of --batch sequences, like wireup-train's --train_batch_size per rank.

Prints one machine-readable line:
  [eager] mode=... world=W threads=T params=N steps=S warmup=K tokens_per_s=X
          best_tokens_per_s=Z step_time_s=Y best_step_time_s=V cpu_step_s=C
          loss_first=... loss_last=... torch=...
Each timed step (after the warmup ones) is timed on its own: data, forward,
backward, clipping, optimizer and loss.item(). tokens_per_s counts the tokens
of all ranks over all timed steps; best_tokens_per_s over the fastest one
(other load on a shared machine only ever slows a step down). cpu_step_s is
rank 0's process CPU time per timed step, all its threads.
With --profile it also prints the autograd profiler's table of one step.

Needs Debian's python3-torch: run it with /usr/bin/python3. On a GPU node,
--device cuda [--bf16] runs it on the GPU (tests/gpu/gpu_check.sh).
--compile: the same model through torch.compile (PyTorch 2.x; Inductor
generates fused Triton kernels for the norms, RoPE, SwiGLU and the loss, and
picks the GEMMs) -- the peer torchtitan's recipe uses; compilation happens in
the warm-up steps, which are not timed. The line then says mode=compiled.
"""
import argparse
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def attention_kernel():
    """The fused causal attention of this PyTorch, as wireup-train uses it."""
    if hasattr(F, "scaled_dot_product_attention"):  # PyTorch >= 2.0
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if hasattr(torch._C._nn, "_scaled_dot_product_attention"):  # 1.13
        return lambda q, k, v: torch._C._nn._scaled_dot_product_attention(
            q, k, v, None, 0.0, False, True)[0]

    def manual(q, k, v):
        t = q.size(-2)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        return s.masked_fill(mask, float("-inf")).softmax(-1) @ v
    return manual


SDPA = attention_kernel()


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_table(head_dim, seq, theta):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    angles = torch.outer(torch.arange(seq, dtype=torch.float64), inv)
    return torch.polar(torch.ones_like(angles), angles).to(torch.complex64)  # [T, d/2]


def apply_rope(x, freqs):  # x: [B, T, h, d], Meta's interleaved pairs
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs[: x.size(1)].view(1, x.size(1), 1, -1))
    return out.flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = a.heads, a.kv_heads, a.hidden // a.heads
        self.wq = nn.Linear(a.hidden, a.heads * self.head_dim, bias=False)
        self.wk = nn.Linear(a.hidden, a.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(a.hidden, a.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(a.heads * self.head_dim, a.hidden, bias=False)

    def forward(self, x, freqs):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k = self.wk(x).view(b, t, self.kv_heads, self.head_dim)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim)
        q, k = apply_rope(q, freqs), apply_rope(k, freqs)
        rep = self.heads // self.kv_heads
        if rep > 1:  # torchtitan's repeat_kv
            k = k[:, :, :, None, :].expand(b, t, self.kv_heads, rep, self.head_dim).reshape(
                b, t, self.heads, self.head_dim)
            v = v[:, :, :, None, :].expand(b, t, self.kv_heads, rep, self.head_dim).reshape(
                b, t, self.heads, self.head_dim)
        o = SDPA(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return self.wo(o.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.w1 = nn.Linear(a.hidden, a.intermediate, bias=False)
        self.w2 = nn.Linear(a.intermediate, a.hidden, bias=False)
        self.w3 = nn.Linear(a.hidden, a.intermediate, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attention_norm = RMSNorm(a.hidden)
        self.attention = Attention(a)
        self.ffn_norm = RMSNorm(a.hidden)
        self.feed_forward = FeedForward(a)

    def forward(self, x, freqs):
        h = x + self.attention(self.attention_norm(x), freqs)
        return h + self.feed_forward(self.ffn_norm(h))


class LoraLinear(nn.Module):
    """PEFT's LoRA layer in training mode: the frozen Linear plus scale * B(A(x))."""

    def __init__(self, base, rank, alpha):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.lora_A = nn.Linear(base.in_features, rank, bias=False)  # kaiming-uniform
        self.lora_B = nn.Linear(rank, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scale


def add_lora(model, rank, alpha):
    """Freezes every parameter and wraps the blocks' seven projections, as PEFT does."""
    model.requires_grad_(False)
    for block in model.layers:
        for parent, names in ((block.attention, ("wq", "wk", "wv", "wo")),
                              (block.feed_forward, ("w1", "w2", "w3"))):
            for n in names:
                setattr(parent, n, LoraLinear(getattr(parent, n), rank, alpha))


class Llama(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.tok_embeddings = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.output = nn.Linear(a.hidden, a.vocab, bias=False)
        if a.tie:  # Llama 3.2 1B/3B: the output head is the embedding matrix
            self.output.weight = self.tok_embeddings.weight
        # A plain attribute, as in Meta's reference: Gloo cannot broadcast a complex buffer.
        self.freqs = rope_table(a.hidden // a.heads, a.seq, a.rope_theta)
        out_std = 0.02 / math.sqrt(2 * a.layers)
        for name, p in self.named_parameters():
            if p.dim() == 1:
                nn.init.ones_(p)
            else:
                nn.init.normal_(p, 0.0, out_std if name.endswith(("wo.weight", "w2.weight")) else 0.02)

    def forward(self, tokens, targets):
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, self.freqs)
        logits = self.output(self.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv_heads", type=int, default=4)
    p.add_argument("--intermediate", type=int, default=1376)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--rope_theta", type=float, default=10000.0)
    p.add_argument("--tie", action="store_true", help="tie the output head to the embedding")
    p.add_argument("--batch", type=int, default=4, help="sequences per rank per step")
    p.add_argument("--steps", type=int, default=6, help="timed steps")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    p.add_argument("--lora_rank", type=int, default=0,
                   help="> 0: LoRA adapters of this rank on the frozen model (PEFT's layer)")
    p.add_argument("--lora_alpha", type=float, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight_decay", type=float, default=0.1)
    p.add_argument("--grad_clip", type=float, default=1.0, help="0: off")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--device", default="cpu", help="cpu, or cuda (one GPU per rank)")
    p.add_argument("--bf16", action="store_true",
                   help="bf16 autocast over fp32 weights (CUDA), as wireup-train --bf16 1")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model (compiled in the untimed warm-up steps)")
    p.add_argument("--profile", action="store_true",
                   help="also print the autograd profiler table of one step")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
    torch.manual_seed(a.seed)  # the same init on every rank (DDP broadcasts rank 0's anyway)
    model = Llama(a)
    params = sum(p.numel() for p in model.parameters())
    if a.lora_rank > 0:
        add_lora(model, a.lora_rank, a.lora_alpha)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        model = model.to(dev)
        model.freqs = model.freqs.to(dev)
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model)
    opt_params = [p for p in model.parameters() if p.requires_grad]
    if a.compile:
        if not hasattr(torch, "compile"):
            sys.exit(f"llama_eager.py: --compile needs PyTorch 2.x (this is {torch.__version__})")
        model = torch.compile(model)
    opt = torch.optim.AdamW(opt_params, lr=a.lr, betas=(0.9, 0.95), eps=1e-8,
                            weight_decay=a.weight_decay)
    gen = torch.Generator().manual_seed(a.seed * 7919 + rank)

    def step():
        data = torch.randint(a.vocab, (a.batch, a.seq + 1), generator=gen).to(dev)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=a.bf16):
            loss = model(data[:, :-1], data[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(opt_params, a.grad_clip)
        opt.step()
        return loss.item()

    losses, times = [], []
    for _ in range(a.warmup):
        losses.append(step())
    c0 = time.process_time()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    cpu = time.process_time() - c0
    tokens = a.batch * a.seq * world  # per step, all ranks
    if rank == 0:
        mode = "compiled" if a.compile else ("ddp" if world > 1 else "single")
        print(f"[eager] mode={mode} device={dev.type} "
              f"bf16={int(a.bf16)} world={world} "
              f"threads={torch.get_num_threads()} params={params} steps={a.steps} "
              f"warmup={a.warmup} tokens_per_s={tokens * a.steps / sum(times):.1f} "
              f"best_tokens_per_s={tokens / min(times):.1f} "
              f"step_time_s={sum(times) / a.steps:.3f} best_step_time_s={min(times):.3f} "
              f"cpu_step_s={cpu / a.steps:.3f} "
              f"loss_first={losses[0]:.6f} loss_last={losses[-1]:.6f} "
              f"trainable={sum(p.numel() for p in opt_params)} "
              f"peak_rss_mib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} "
              f"torch={torch.__version__}",
              flush=True)
    if a.profile:
        from torch.autograd import profiler
        with profiler.profile() as prof:
            step()
        if rank == 0:
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30))
    if world > 1:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
