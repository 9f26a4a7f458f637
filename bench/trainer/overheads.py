#!/usr/bin/python3
"""Where wireup-train's step differs from the eager peer's, timed piece by piece.

Not part of run.sh: a diagnostic for docs/bench-trainer.md. Each row times two
ways of doing the same part of one training step of the 'small' model (batch
4, seq 256, one thread): the way wireup-train does it (trainer/ops/*.cpp,
same ATen calls) and the way the eager peer (or a cheaper alternative) does
it. The two variants alternate inside one process, --reps times, and the
medians of their CPU times are compared, so that other load on the machine
hits both alike. Figures are CPU milliseconds per training step (each piece
scaled by how often a step runs it).

Needs Debian's python3-torch: run it with /usr/bin/python3.
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

B, T, HID, NH, KV, HD, INTER, VOCAB, LAYERS = 4, 256, 512, 8, 4, 64, 1376, 8000, 4
BLOCK = 2 * HID + HID * (HID + 2 * KV * HD) + HID * HID + 3 * HID * INTER
PARAMS = 2 * VOCAB * HID + LAYERS * BLOCK + HID  # 19,796,480
UNITS = [VOCAB * HID] + [BLOCK] * LAYERS + [HID + VOCAB * HID]


def timeit(fn, reps):
    fn()
    out = []
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return out


def compare(name, a_name, a, b_name, b, per_step, reps):
    ta, tb = [], []
    for _ in range(reps):  # alternate: each round times both once
        ta += timeit(a, 1)
        tb += timeit(b, 1)
    ma, mb = statistics.median(ta) * per_step * 1e3, statistics.median(tb) * per_step * 1e3
    print(f"| {name} | {a_name}: {ma:.1f} | {b_name}: {mb:.1f} | {ma - mb:+.1f} |", flush=True)
    return ma - mb


# --- RoPE: wireup's real arithmetic (llama_math.cpp) vs complex multiply ---------
def rope_tables():
    inv = 1.0 / (10000.0 ** (torch.arange(0, HD, 2, dtype=torch.float64) / HD))
    ang = torch.outer(torch.arange(T, dtype=torch.float64), inv)
    return ang.cos().float(), ang.sin().float(), torch.polar(torch.ones_like(ang), ang).to(torch.complex64)


COS, SIN, CIS = rope_tables()


def rope_real(x):
    b, t, h, d = x.shape
    pairs = x.view(b, t, h, d // 2, 2)
    re, im = pairs.select(-1, 0), pairs.select(-1, 1)
    c, s = COS[:t].view(1, t, 1, d // 2), SIN[:t].view(1, t, 1, d // 2)
    return torch.stack([re * c - im * s, re * s + im * c], -1).view(b, t, h, d)


def rope_complex(x):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * CIS[: x.size(1)].view(1, x.size(1), 1, -1)).flatten(3)


def rope_case(fn):
    qkv = torch.randn(B, T, HID + 2 * KV * HD, requires_grad=True)

    def run():
        q = qkv[..., :HID].view(B, T, NH, HD)
        k = qkv[..., HID:HID + KV * HD].view(B, T, KV, HD)
        (fn(q).sum() + fn(k).sum()).backward()
        qkv.grad = None
    return run


# --- gradient norm: fp64 copy (sharded_adamw.cpp) vs fp32 norm -----------------
def norm_cases():
    grads = [torch.randn(n) for n in UNITS]

    def fp64():
        sq = torch.zeros(1, dtype=torch.float64)
        for g in grads:
            sq.add_(g.to(torch.float64).pow(2).sum())
        return sq.sqrt().item()

    def fp32():
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()
    return fp64, fp32


# --- gradients: a zeroed flat buffer per unit that autograd adds into (fsdp_model.cpp)
#     vs autograd handing over its own tensor (eager, set_to_none) -----------------
def grad_cases():
    ws = [torch.randn(n, requires_grad=True) for n in UNITS]
    scale = torch.tensor(0.5)

    def into_zeros():
        for w in ws:
            w.grad = torch.zeros(w.numel())  # new_full_grad; AccumulateGrad then adds into it
            (w * scale).sum().backward()
            w.grad = None

    def stolen():
        for w in ws:
            (w * scale).sum().backward()  # AccumulateGrad keeps MulBackward's fresh tensor
            w.grad = None
    return into_zeros, stolen


# --- world 1: gathering a unit twice per step (copy into a fresh buffer) vs using
#     the fp32 master in place; plus the reduce-scatter copy and the add into grad --
def gather_cases():
    masters = [torch.randn(n) for n in UNITS]
    grads = [torch.zeros(n) for n in UNITS]

    def copies():
        for m, g in zip(masters, grads):
            for _ in range(2):  # forward and backward gather
                full = torch.empty(m.numel())
                full.copy_(m)
                del full
            part = torch.empty(m.numel())
            part.copy_(m)  # solo reduce-scatter: a copy
            g.add_(part)

    def in_place():
        for m, g in zip(masters, grads):
            g.add_(m)  # the one unavoidable pass: grads land in the fp32 shard
    return copies, in_place


# --- AdamW: per flat unit (sharded_adamw.cpp) vs foreach over the units ---------
def adam_cases():
    ps = [torch.randn(n) for n in UNITS]
    gs = [torch.randn(n) for n in UNITS]
    ms = [torch.zeros(n) for n in UNITS]
    vs = [torch.zeros(n) for n in UNITS]
    lr, wd, b1, b2, eps, bc1, bc2 = 3e-4, 0.1, 0.9, 0.95, 1e-8, 0.1, 0.05

    def per_unit():
        for p, g, m, v in zip(ps, gs, ms, vs):
            p.mul_(1 - lr * wd)
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / bc2 ** 0.5).add_(eps)
            p.addcdiv_(m, denom, value=-lr / bc1)
            g.zero_()

    def foreach():
        torch._foreach_mul_(ps, 1 - lr * wd)
        torch._foreach_mul_(ms, b1)
        torch._foreach_add_(ms, gs, alpha=1 - b1)
        torch._foreach_mul_(vs, b2)
        torch._foreach_addcmul_(vs, gs, gs, 1 - b2)
        denom = torch._foreach_sqrt(vs)
        torch._foreach_div_(denom, bc2 ** 0.5)
        torch._foreach_add_(denom, eps)
        torch._foreach_addcdiv_(ps, ms, denom, -lr / bc1)
        for g in gs:
            g.zero_()
    return per_unit, foreach


# --- GEMM shapes: fused QKV and W1|W3 (llama_math.cpp) vs separate projections ---
def gemm_cases():
    x = torch.randn(B * T, HID, requires_grad=True)
    wqkv = torch.randn(HID + 2 * KV * HD, HID, requires_grad=True)
    w13 = torch.randn(2 * INTER, HID, requires_grad=True)
    sep = [torch.randn(n, HID, requires_grad=True) for n in (HID, KV * HD, KV * HD, INTER, INTER)]

    def fused():
        (F.linear(x, wqkv).sum() + F.linear(x, w13).sum()).backward()

    def separate():
        sum(F.linear(x, w).sum() for w in sep).backward()
    return fused, separate


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=7)
    a = p.parse_args()
    torch.set_num_threads(1)
    print("| piece (ms per step) | wireup-train's way | alternative | difference |")
    print("| --- | --- | --- | --- |")
    r = a.reps
    compare("RoPE on q and k, fwd+bwd, 4 layers", "real pairs + stack", rope_case(rope_real),
            "complex multiply", rope_case(rope_complex), LAYERS, r)
    compare("gradient norm over 19.8M", "fp64 copy, pow, sum", *norm_cases()[:1],
            "fp32 vector_norm", norm_cases()[1], 1, r)
    compare("parameter gradients, 19.8M", "zeroed buffer + add", grad_cases()[0],
            "autograd's tensor", grad_cases()[1], 1, r)
    compare("world 1: gathers, reduce-scatter copy, add", "2 gathers + copy + add",
            gather_cases()[0], "add only", gather_cases()[1], 1, r)
    compare("AdamW over 19.8M", "per unit", adam_cases()[0], "foreach", adam_cases()[1], 1, r)
    compare("QKV and W1/W3 GEMMs, fwd+bwd, 4 layers", "fused", gemm_cases()[0], "separate",
            gemm_cases()[1], LAYERS, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
