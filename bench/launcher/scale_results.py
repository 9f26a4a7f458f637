"""The launch scale benchmark's arithmetic (scale_bench.sh runs it).

  scale_results.py check light|floor|torch OUTPUT T0 WORLD LOCAL_WORLD
      Checks one run's output and prints the seconds from T0 (the launch) until the last rank
      was wired (light: its WIRED line's start time) or finished its first all_reduce
      (torch: its ALLREDUCE line's done_at), or, for plain srun with no wiring (floor), until
      the last Slurm task started. Exit 1 with the reason when the run did not wire every
      rank (start every task) exactly once and consistently.
  scale_results.py report RAW META OUT.md
      Writes the markdown report from RAW (one run a line: kind contender nodes rep
      seconds step_seconds) and META (key=value lines).
"""
import re
import statistics
import sys

CONTENDERS = [("srun", "srun, no wiring (Slurm's floor)"), ("spank", "srun --wireup"), ("launch", "wireup-launch"),
              ("store", "wireup-launch --agent-store"), ("torchrun", "torchrun")]
KINDS = {"light": "launch to all ranks wired (light workers)",
         "torch": "launch to first all_reduce (torch workers, gloo)"}
WIRING_RATIO_TARGET = 0.3


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def check(kind, path, t0, world, local_world):
    with open(path, errors="replace") as f:
        text = f.read()
    seen = {}
    if kind == "floor":
        for m in re.finditer(r"WIRED task=(\S+) .* at=([\d.]+)", text):
            task, at = m.groups()
            if not task.isdigit() or int(task) in seen:
                fail(f"task {task} started twice or without SLURM_PROCID")
            seen[int(task)] = (float(at), "")
    elif kind == "light":
        pat = re.compile(r"WIRED task=\S+ rank=(\S+) world=(\S+) local_rank=(\S+) local_world=(\S+) "
                         r"master=(\S+) at=([\d.]+)")
        for m in pat.finditer(text):
            rank, w, lr, lw, master, at = m.groups()
            if not rank.isdigit():
                fail(f"a worker started without RANK: {m.group(0)}")
            r = int(rank)
            if r in seen:
                fail(f"rank {r} reported twice")
            if w != str(world) or lw != str(local_world):
                fail(f"rank {r}: WORLD_SIZE={w} LOCAL_WORLD_SIZE={lw}, "
                     f"expected {world} and {local_world}")
            if not lr.isdigit() or int(lr) >= local_world:
                fail(f"rank {r}: LOCAL_RANK={lr}, expected 0..{local_world - 1}")
            if "unset" in master:
                fail(f"rank {r}: MASTER_ADDR:MASTER_PORT is {master}")
            seen[r] = (float(at), master)
        masters = {m for _, m in seen.values()}
        if len(masters) > 1:
            fail(f"ranks disagree on the master: {sorted(masters)}")
    else:
        pat = re.compile(r"ALLREDUCE rank=(\d+) world=(\d+) \S+ sum=\S+ (\S+) done_at=([\d.]+)")
        for m in pat.finditer(text):
            r, w, status, at = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
            if r in seen:
                fail(f"rank {r} reported twice")
            if w != world or status != "ok":
                fail(f"rank {r}: world {w} (expected {world}), all_reduce {status}")
            seen[r] = (float(at), "")
    missing = sorted(set(range(world)) - set(seen))
    if missing or len(seen) != world:
        fail(f"{len(seen)} of {world} ranks reported; missing {missing[:10]}")
    print(f"{max(at for at, _ in seen.values()) - t0:.3f}")


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def report(raw_path, meta_path, out_path):
    rows = []
    with open(raw_path) as f:
        for line in f.read().splitlines()[1:]:
            kind, who, nodes, rep, secs, step = line.split()
            rows.append((kind, who, int(nodes), int(rep), secs, step))
    with open(meta_path) as f:
        meta_lines = [tuple(line.rstrip("\n").split("=", 1)) for line in f if "=" in line]
    meta = dict(meta_lines)
    node_counts = sorted({r[2] for r in rows})

    def median(kind, who, n):
        v = [float(r[4]) for r in rows if r[:3] == (kind, who, n) and r[4] != "FAILED"]
        return statistics.median(v) if v else None

    def runs(kind, who, n):
        return sum(1 for r in rows if r[:3] == (kind, who, n))

    def failures(kind, who, n):
        return sum(1 for r in rows if r[:3] == (kind, who, n) and r[4] == "FAILED")

    out = [f"## launch at {', '.join(map(str, node_counts))} nodes: wireup vs torchrun", "",
           f"Lane {meta.get('lane', '?')}: Slurm {meta.get('slurm', '?')}, torch "
           f"{meta.get('torch', '?')} (torchrun {meta.get('torchrun_patch', '?')}), "
           f"{meta.get('cores', '?')} cores, load average {meta.get('load_before', '?')} "
           f"before and {meta.get('load_after', '?')} after. {meta.get('reps', '?')} "
           "repetitions, contenders interleaved (their order rotates each repetition); "
           "emulated nodes of one machine (tests/cluster/cluster.sh). Light workers: "
           f"{meta.get('light_per_node', '?')} a node (bench/launcher/light_worker.sh); torch "
           f"workers: {meta.get('torch_per_node', '?')} a node "
           "(tests/launcher/programs/gloo_allreduce.py, gloo on CPU). Medians in seconds from srun's "
           "start; ratio = contender / torchrun at the same node count; growth = the median at "
           "one node count over the median at the previous one (node factor in brackets). Plain "
           "srun (light workers, no wiring) is the floor: how long Slurm itself takes to start "
           "every task, which every contender pays.", ""]
    recovered = [v for k, v in meta_lines if k == "recovered_node"]
    if recovered:
        out += [f"Slurm drained or downed a node after a run {len(recovered)} time(s); the "
                "benchmark resumed it before the next run (node, state, reason): " +
                "; ".join(recovered) + ".", ""]
    targets = []
    for kind, title in KINDS.items():
        if not any(r[0] == kind for r in rows):
            continue
        head = ["contender"] + [f"{n} nodes s" for n in node_counts] + \
               [f"ratio {n}" for n in node_counts] + \
               [f"growth {a}->{b} ({b / a:g}x)" for a, b in zip(node_counts, node_counts[1:])]
        out += [f"### {title}", "", "| " + " | ".join(head) + " |",
                "|" + "---|" * len(head)]
        for who, name in CONTENDERS:
            if not any(runs(kind, who, n) for n in node_counts):
                continue  # plain srun runs light workers only
            meds = [median(kind, who, n) for n in node_counts]
            tr = [median(kind, "torchrun", n) for n in node_counts]
            ratios = [m / t if m is not None and t else None for m, t in zip(meds, tr)]
            growth = [b / a if a and b is not None else None for a, b in zip(meds, meds[1:])]
            cells = [fmt(m) + (f" ({failures(kind, who, n)} of {runs(kind, who, n)} FAILED)"
                               if failures(kind, who, n) else "")
                     for m, n in zip(meds, node_counts)]
            ratio_cells = ["1" if who == "torchrun" else fmt(r) for r in ratios]
            out.append(f"| {name} | " + " | ".join(cells + ratio_cells +
                                                     [fmt(g) for g in growth]) + " |")
            if kind == "light" and who not in ("torchrun", "srun"):
                big = node_counts[-1]
                r = ratios[-1]
                verdict = "not measured" if r is None else \
                    "met" if r <= WIRING_RATIO_TARGET else "NOT met"
                targets.append(f"{name}: wiring at {big} nodes {fmt(r)}x torchrun's "
                               f"(target <= {WIRING_RATIO_TARGET}): {verdict}")
                lin = all(g is not None and g <= b / a for g, a, b in
                          zip(growth, node_counts, node_counts[1:]))
                verdict = ("met" if lin else "NOT met") if growth else "needs two node counts"
                targets.append(f"{name}: wiring time grows at most linearly with nodes "
                               f"(each growth <= its node factor): {verdict}")
        out.append("")
    out += ["Targets:", ""] + [f"- {t}" for t in targets] + ["",
            "Raw runs (kind contender nodes rep seconds-to-wired-or-all_reduce "
            "seconds-until-srun-returned):", "", "```"] + \
        [" ".join(map(str, r)) for r in rows] + ["```"]
    with open(out_path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out[: out.index("Raw runs (kind contender nodes rep seconds-to-wired-or-"
                                     "all_reduce seconds-until-srun-returned):")]))


def main(argv):
    if len(argv) == 7 and argv[1] == "check" and argv[2] in ("light", "floor", "torch"):
        check(argv[2], argv[3], float(argv[4]), int(argv[5]), int(argv[6]))
    elif len(argv) == 5 and argv[1] == "report":
        report(argv[2], argv[3], argv[4])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv)
