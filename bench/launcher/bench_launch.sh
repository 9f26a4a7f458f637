#!/bin/bash
# Launch-to-first-all_reduce time: torchrun (Debian's, c10d rendezvous) versus
# wireup-launch (agent mode, PMIx) as is, with --agent-store, and with
# --agent-store --preload=torch.distributed (both opt-in), the same gloo script,
# on the emulated nodes of a local Slurm cluster; runs interleaved, REPS repetitions.
#
#   bench_launch.sh WIREUP_LAUNCH [REPORT] [REPS]
# Env: WIREUP_BENCH_CLUSTER_DIR (default: start one under /tmp at port
# WIREUP_BENCH_CLUSTER_PORT, default 27830).
set -u
WL=$(realpath "${1:?usage: bench_launch.sh WIREUP_LAUNCH [REPORT] [REPS]}")
REPORT=${2:-bench-launcher-report.md}
REPS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SCRIPT=$ROOT/tests/launcher/programs/gloo_allreduce.py
PY=/usr/bin/python3
CLUSTER=$ROOT/tests/cluster/cluster.sh
WORK=$(mktemp -d /tmp/wireup-bench.XXXXXX)
chmod 755 "$WORK"  # munged refuses a socket under a directory others cannot enter
export GLOO_SOCKET_IFNAME=lo

if [ -n "${WIREUP_BENCH_CLUSTER_DIR:-}" ]; then
  CDIR=$WIREUP_BENCH_CLUSTER_DIR
else
  CDIR=$WORK/cluster
  WIREUP_CLUSTER_NODES=4 WIREUP_CLUSTER_PORT=${WIREUP_BENCH_CLUSTER_PORT:-27830} \
    bash "$CLUSTER" start "$CDIR" || exit 1
  trap 'bash "$CLUSTER" stop "$CDIR" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
fi
eval "$(bash "$CLUSTER" env "$CDIR")"

# wireup-launch's flags per method; torchrun is run as its users run it.
declare -A FLAGS=([wireup]="" [store]="--agent-store"
                  [preload]="--agent-store --preload=torch.distributed")
METHODS="torchrun wireup store preload"

# One run: prints "SECONDS PMIX_INIT_MS FENCE_MS SPAWN_MS PRELOAD_MS" (phases: max over agents).
run_one() {  # METHOD NODES PER_NODE PORT
  local method=$1 nodes=$2 k=$3 port=$4 out=$WORK/run.out t0
  t0=$(date +%s.%N)
  if [ "$method" = torchrun ]; then
    # shellcheck disable=SC2016 # $SLURM_NODEID and $h are the task's
    PYTHONPATH=$HERE/torchrun_patch timeout 300 srun -N"$nodes" --ntasks-per-node=1 bash -c '
      [ "$SLURM_NODEID" = 0 ] && h=1 || h=0
      exec /usr/bin/torchrun --nnodes='"$nodes"' --nproc_per_node='"$k"' --rdzv_backend=c10d \
        --rdzv_endpoint=127.0.0.2:'"$port"' --rdzv_id=bench'"$port"' --rdzv_conf=is_host=$h \
        --max_restarts=0 '"$SCRIPT" >"$out" 2>&1
  else
    # shellcheck disable=SC2086  # FLAGS: words on purpose
    WIREUP_LAUNCH_TIMING=1 timeout 300 srun --mpi=pmix -N"$nodes" --ntasks-per-node=1 "$WL" \
      --nproc-per-node="$k" ${FLAGS[$method]} --python="$PY" -- "$SCRIPT" >"$out" 2>&1
  fi
  local rc=$?
  local n; n=$(grep -o "sum=[0-9]* ok" "$out" | wc -l)  # torchrun lines may interleave
  if [ "$rc" -ne 0 ] || [ "$n" -ne $((nodes * k)) ]; then
    echo "run failed: $method $nodes x $k (rc $rc, $n ranks ok)" >&2; tail -20 "$out" >&2
    echo "NaN NaN NaN NaN NaN"; return
  fi
  python3 - "$out" "$t0" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
t0 = float(sys.argv[2])
done = max(float(x) for x in re.findall(r"done_at=([\d.]+)", text))
def phase(name):
    v = [float(x) for x in re.findall(name + r"=([\d.]+)", text)]
    return f"{max(v):.1f}" if v else "-"
print(f"{done - t0:.3f} {phase('pmix_init_ms')} {phase('fence_ms')} {phase('spawn_ms')} "
      f"{phase('preload_ms')}")
PY
}

CONFIGS="2x2 4x2 4x4"   # nodes x workers per node: 4, 8 and 16 ranks
echo "method nodes per_node rep seconds pmix_init_ms fence_ms spawn_ms preload_ms" >"$WORK/raw.txt"
port=29600
for rep in $(seq "$REPS"); do
  for cfg in $CONFIGS; do
    for method in $METHODS; do   # interleaved: drift hits every method alike
      nodes=${cfg%x*}; k=${cfg#*x}; port=$((port + 1))
      line=$(run_one "$method" "$nodes" "$k" "$port")
      echo "$method $nodes $k $rep $line" | tee -a "$WORK/raw.txt"
    done
  done
done

python3 - "$WORK/raw.txt" "$REPORT" "$REPS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
NAMES = {"wireup": "wireup", "store": "--agent-store",
         "preload": "--agent-store --preload=torch.distributed"}
out = ["# wireup-launch vs torchrun: launch to first all_reduce", "",
       f"Gloo all_reduce script (tests/launcher/programs/gloo_allreduce.py), srun on emulated nodes of one "
       f"{__import__('os').cpu_count()}-core machine, {sys.argv[3]} interleaved repetitions. torchrun "
       "is Debian's 1.13.1 with the Python 3.11 Std.from_str patch (bench/launcher/torchrun_patch), "
       "c10d rendezvous, is_host=1 on node 0 only. wireup-launch runs in agent mode under "
       "`srun --mpi=pmix`: as is (`wireup`), with the opt-in `--agent-store`, and with "
       "`--agent-store --preload=torch.distributed`. Seconds are medians from launch until the "
       "last rank finished its first all_reduce; ratios are to torchrun's median; phases are the "
       "slowest agent's (ms, medians).", "",
       "| ranks | nodes x per node | torchrun s | wireup s (ratio) | --agent-store s (ratio) | "
       "--agent-store --preload s (ratio) | PMIx init ms | fence ms | spawn ms | "
       "spawn via preload ms | preload import ms |",
       "|---|---|---|---|---|---|---|---|---|---|---|"]
met = {m: True for m in NAMES}
for cfg in sorted({(int(r[1]), int(r[2])) for r in rows}, key=lambda c: c[0] * c[1]):
    def med(method, col):
        v = [float(r[col]) for r in rows if r[0] == method and (int(r[1]), int(r[2])) == cfg
             and r[col] not in ("NaN", "-")]
        return statistics.median(v) if v else float("nan")
    t = med("torchrun", 4)
    cells = []
    for m in NAMES:
        w = med(m, 4)
        ratio = w / t if t == t and t > 0 else float("nan")
        met[m] = met[m] and ratio <= 0.5
        cells.append(f"{w:.2f} ({ratio:.2f})")
    phases = " | ".join(f"{med(m, c):.0f}" for m, c in
                        (("store", 5), ("store", 6), ("store", 7), ("preload", 7), ("preload", 8)))
    out.append(f"| {cfg[0]*cfg[1]} | {cfg[0]} x {cfg[1]} | {t:.2f} | " + " | ".join(cells) +
               f" | {phases} |")
out += ["", "Target (wireup-launch's median at most half of torchrun's, every size): " +
        "; ".join(f"{NAMES[m]}: {'met' if met[m] else 'NOT met'}" for m in NAMES), "",
        "PMIx init, fence and spawn (fork+exec of the workers) are from the --agent-store runs; "
        "spawn via preload (forks through the preload server) and preload import (the server's "
        "start to its READY: the one import of torch.distributed per node) from the --preload "
        "runs.", "",
        "Raw runs (seconds, phases in ms):", "", "```"] + [" ".join(r) for r in rows] + ["```"]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out[:14]))
PY
