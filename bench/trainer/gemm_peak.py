#!/usr/bin/python3
"""Single-thread fp32 GEMM FLOP/s through torch.mm (the BLAS LibTorch calls),
or with --library onednn through oneDNN's dnnl_sgemm (what wireup-train's
linear layers call on the CPU; libdnnl.so.2, which Debian's LibTorch links).

Measure: multiplies two NxN matrices (default 2048) for --seconds, one thread,
after one untimed multiplication, and prints
  [gemm] library=L n=N threads=1 mms=K best_gflops=B mean_gflops=A cpu_gflops=C seconds=S
best is the best --window-second stretch (1 s: a few multiplications), mean
all the FLOPs over the whole span, cpu all of them per CPU second of the
process (which time spent waiting for the core does not count against). With --record FILE it also writes one line
per multiplication: start and end (epoch seconds) and FLOPs. --start_at
EPOCH_SECONDS sleeps until then, so that processes started apart run together.

Combine: --combine FILE... reads such records from processes that ran at the
same time and prints the best --window of their summed FLOP/s
  [gemm-combined] processes=P best_gflops=B mean_gflops=A
with each multiplication's FLOPs spread evenly over its own duration. On a
machine shared with other work that only ever slows things down, the best
stretch is the figure least disturbed by it; the same statistic for one
process and for two makes their ratio the machine's own scaling.

Needs Debian's python3-torch for measuring: run it with /usr/bin/python3.
"""
import argparse
import ctypes
import sys
import time


def best_window(records, window):
    """Best average FLOP/s over any `window` seconds of the union of records."""
    if not records:
        return 0.0
    lo, hi = min(r[0] for r in records), max(r[1] for r in records)
    if hi - lo <= window:
        return sum(r[2] for r in records) / (hi - lo)
    # The window's mean is piecewise linear in its start: the best start puts
    # one of its edges on some multiplication's start or end.
    edges = {x for r in records for x in r[:2]}
    starts = {t for e in edges for t in (e, e - window) if lo <= t <= hi - window}
    best = 0.0
    for a in starts:
        b = a + window
        f = sum(r[2] * max(0.0, min(b, r[1]) - max(a, r[0])) / (r[1] - r[0]) for r in records)
        best = max(best, f / window)
    return best


def mean_rate(records):
    lo, hi = min(r[0] for r in records), max(r[1] for r in records)
    return sum(r[2] for r in records) / (hi - lo)


def onednn_mm():
    """out = x @ y for contiguous fp32 CPU tensors through dnnl_sgemm (row-major)."""
    dnnl = ctypes.CDLL("libdnnl.so.2")
    i64, fp = ctypes.c_int64, ctypes.c_void_p
    dnnl.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, ctypes.c_float,
                                fp, i64, fp, i64, ctypes.c_float, fp, i64]
    dnnl.dnnl_sgemm.restype = ctypes.c_int
    # oneDNN's OpenMP threads are the calling thread's: torch.set_num_threads sets them

    def mm(x, y, out):
        m, k = x.shape
        n = y.shape[1]
        rc = dnnl.dnnl_sgemm(b"N", b"N", m, n, k, 1.0, x.data_ptr(), k, y.data_ptr(), n, 0.0,
                             out.data_ptr(), n)
        if rc != 0:
            raise RuntimeError(f"dnnl_sgemm failed with status {rc}")
    return mm


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--window", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--library", choices=["torch", "onednn"], default="torch")
    p.add_argument("--start_at", type=float, default=0.0)
    p.add_argument("--record", help="write start end flops per multiplication here")
    p.add_argument("--combine", nargs="+", metavar="FILE", help="sum records of concurrent runs")
    a = p.parse_args()

    if a.combine:
        recs = []
        for path in a.combine:
            with open(path) as f:
                recs += [tuple(map(float, line.split())) for line in f if line.strip()]
        print(f"[gemm-combined] processes={len(a.combine)} "
              f"best_gflops={best_window(recs, a.window) / 1e9:.2f} "
              f"mean_gflops={mean_rate(recs) / 1e9:.2f}", flush=True)
        return 0

    import torch
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(a.n, a.n, generator=g)
    y = torch.randn(a.n, a.n, generator=g)
    out = torch.empty(a.n, a.n)
    mm = onednn_mm() if a.library == "onednn" else (lambda x, y, out: torch.mm(x, y, out=out))
    mm(x, y, out)  # warm: page in, pick the kernel
    delay = a.start_at - time.time()
    if delay > 0:
        time.sleep(delay)
    flops = 2.0 * a.n ** 3
    recs = []
    c0 = time.process_time()
    t_end = time.time() + a.seconds
    while not recs or recs[-1][1] < t_end:
        t0 = time.time()
        mm(x, y, out)
        recs.append((t0, time.time(), flops))
    cpu = time.process_time() - c0
    if a.record:
        with open(a.record, "w") as f:
            f.writelines(f"{s:.6f} {e:.6f} {fl:.0f}\n" for s, e, fl in recs)
    print(f"[gemm] library={a.library} n={a.n} threads={torch.get_num_threads()} mms={len(recs)} "
          f"best_gflops={best_window(recs, a.window) / 1e9:.2f} "
          f"mean_gflops={mean_rate(recs) / 1e9:.2f} cpu_gflops={flops * len(recs) / cpu / 1e9:.2f} "
          f"seconds={recs[-1][1] - recs[0][0]:.2f}",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
