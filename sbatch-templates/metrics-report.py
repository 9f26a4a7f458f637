#!/usr/bin/env python3
"""metrics-report.py: the loss curve and throughput of a training run from the
metrics JSONL files llama-fsdp.sbatch writes (LOG_DIR/metrics-JOBID.jsonl,
wireup-train --metrics_file), as a text table and a PNG plot.

  metrics-report.py LOG_DIR/metrics-*.jsonl                # table only
  metrics-report.py --png loss.png LOG_DIR/metrics-*.jsonl # and the plot

Give the files of one run in job order (a shell glob sorts job ids of equal
length correctly; --sort orders them by the number in their names). A job that
resumed from a checkpoint repeats the steps after it; the later job's records
win, and the plot marks where each job took over. The PNG needs matplotlib
(Debian: python3-matplotlib); without it only the table is printed.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys


def load(path):
    train, val = {}, {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                # A job killed mid-write can leave a partial last line.
                print(f"metrics-report: {path}:{n}: skipped ({e.msg})", file=sys.stderr)
                continue
            kind, step = rec.get("type"), rec.get("step")
            if not isinstance(step, int):
                continue
            if kind == "train" and "loss" in rec:
                train[step] = rec
            elif kind == "validation" and "val_loss" in rec:
                val[step] = rec
    return train, val


def job_label(path):
    m = re.search(r"(\d+)(?=\.jsonl$)", os.path.basename(path))
    return f"job {m.group(1)}" if m else os.path.basename(path)


def fmt(x, spec):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="metrics JSONL files, oldest job first")
    ap.add_argument("--png", help="write the loss/throughput plot here")
    ap.add_argument("--rows", type=int, default=12, help="rows of the loss table (default 12)")
    ap.add_argument("--sort", action="store_true", help="order files by the job id in their names")
    ap.add_argument("--title", default="wireup-train", help="plot title")
    a = ap.parse_args()

    files = a.files
    if a.sort:
        def key(p):
            m = re.search(r"(\d+)(?=\.jsonl$)", os.path.basename(p))
            return (int(m.group(1)) if m else -1, p)
        files = sorted(files, key=key)

    runs = []
    for p in files:
        try:
            train, val = load(p)
        except OSError as e:
            print(f"metrics-report: {p}: {e.strerror}", file=sys.stderr)
            return 2
        if train or val:
            runs.append({"path": p, "label": job_label(p), "train": train, "val": val})
        else:
            print(f"metrics-report: {p}: no train or validation records", file=sys.stderr)
    if not runs:
        print("metrics-report: nothing to report", file=sys.stderr)
        return 1

    # Merged curve: a later job's record of a step replaces an earlier one's.
    merged, merged_val, owner = {}, {}, {}
    for i, r in enumerate(runs):
        for s, rec in r["train"].items():
            merged[s], owner[s] = rec, i
        for s, rec in r["val"].items():
            merged_val[s] = rec
    steps = sorted(merged)

    print("runs:")
    for i, r in enumerate(runs):
        st = sorted(r["train"])
        if not st:
            print(f"  {r['label']}: no train steps ({r['path']})")
            continue
        # Steady state: the first step of a job includes warm-up (allocation, first gather).
        tps = [r["train"][s].get("tokens_per_s") for s in st[1:] or st]
        tps = [t for t in tps if isinstance(t, (int, float))]
        note = f", resumed after step {st[0] - 1}" if i > 0 and st[0] > 1 else ""
        print(f"  {r['label']}: steps {st[0]}-{st[-1]}{note}; loss {r['train'][st[0]]['loss']:.4f} -> "
              f"{r['train'][st[-1]]['loss']:.4f}; mean tokens/s (all ranks) {fmt(statistics.mean(tps) if tps else None, '.1f')}"
              f" ({r['path']})")

    if steps:
        rows = max(2, a.rows)
        pick = sorted({steps[round(k * (len(steps) - 1) / (rows - 1))] for k in range(rows)})
        print("\nloss curve:")
        print(f"  {'step':>6} {'loss':>9} {'val_loss':>9} {'lr':>10} {'tokens/s':>10}  job")
        for s in pick:
            rec = merged[s]
            v = merged_val.get(s, {}).get("val_loss")
            print(f"  {s:>6} {rec['loss']:>9.4f} {fmt(v, '9.4f'):>9} {fmt(rec.get('lr'), '10.3e'):>10} "
                  f"{fmt(rec.get('tokens_per_s'), '10.1f'):>10}  {runs[owner[s]]['label']}")
        tps = [merged[s].get("tokens_per_s") for s in steps[1:] or steps]
        tps = [t for t in tps if isinstance(t, (int, float))]
        mem = [merged[s].get("peak_mem_mib") for s in steps]
        mem = [m for m in mem if isinstance(m, (int, float))]
        print("\nthroughput:")
        print(f"  steps={len(steps)} first_loss={merged[steps[0]]['loss']:.4f} "
              f"final_loss={merged[steps[-1]]['loss']:.4f}"
              + (f" final_val_loss={merged_val[max(merged_val)]['val_loss']:.4f}" if merged_val else ""))
        if tps:
            print(f"  tokens/s (all ranks) mean={statistics.mean(tps):.1f} median={statistics.median(tps):.1f} "
                  f"max={max(tps):.1f}" + (f"; peak memory {max(mem):.1f} MiB per rank" if mem else ""))

    if a.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print(f"\nmetrics-report: no matplotlib (Debian: apt-get install python3-matplotlib); "
                  f"{a.png} not written", file=sys.stderr)
            return 0
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 7), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.4]})
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, r in enumerate(runs):
            st = sorted(r["train"])
            if not st:
                continue
            c = colors[i % len(colors)]
            ax.plot(st, [r["train"][s]["loss"] for s in st], color=c, lw=1.4,
                    label=f"{r['label']}: train loss (steps {st[0]}-{st[-1]})")
            vs = sorted(r["val"])
            if vs:
                ax.plot(vs, [r["val"][s]["val_loss"] for s in vs], "o--", color=c, ms=5,
                        label=f"{r['label']}: validation loss")
            t = [(s, r["train"][s].get("tokens_per_s")) for s in st]
            t = [(s, y) for s, y in t if isinstance(y, (int, float))]
            if t:
                ax2.plot([s for s, _ in t], [y for _, y in t], color=c, lw=1)
            if i > 0 and st[0] > 1:
                for axis in (ax, ax2):
                    axis.axvline(st[0] - 1, color=c, ls=":", lw=1.2)
                ax.annotate(f"{r['label']} resumed from step {st[0] - 1}", xy=(st[0] - 1, 1),
                            xycoords=("data", "axes fraction"), xytext=(4, -14),
                            textcoords="offset points", color=c, fontsize=9)
        ax.set_ylabel("loss")
        ax.set_title(a.title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax2.set_ylabel("tokens/s (all ranks)")
        ax2.set_xlabel("step")
        ax2.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
        print(f"\nplot: {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
