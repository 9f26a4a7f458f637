#!/bin/bash
# Launch-to-first-all_reduce time: torchrun (Debian's, c10d rendezvous) versus
# wireup-launch (agent mode, PMIx), the same gloo script, on the emulated
# nodes of a local Slurm cluster; configurations interleaved, REPS repetitions.
#
#   bench_launch.sh WIREUP_LAUNCH [REPORT] [REPS]
# Env: WIREUP_BENCH_CLUSTER_DIR (default: start one under /tmp, port 27830).
set -u
WL=$(realpath "${1:?usage: bench_launch.sh WIREUP_LAUNCH [REPORT] [REPS]}")
REPORT=${2:-bench-launcher-report.md}
REPS=${3:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SCRIPT=$ROOT/tests/launcher/gloo_allreduce.py
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

# One run: prints "SECONDS PMIX_INIT_MS FENCE_MS SPAWN_MS" (phases: max over agents).
run_one() {  # METHOD NODES PER_NODE PORT
  local method=$1 nodes=$2 k=$3 port=$4 out=$WORK/run.out t0
  t0=$(date +%s.%N)
  if [ "$method" = torchrun ]; then
    PYTHONPATH=$HERE/torchrun_patch timeout 300 srun -N"$nodes" --ntasks-per-node=1 bash -c '
      [ "$SLURM_NODEID" = 0 ] && h=1 || h=0
      exec /usr/bin/torchrun --nnodes='"$nodes"' --nproc_per_node='"$k"' --rdzv_backend=c10d \
        --rdzv_endpoint=127.0.0.2:'"$port"' --rdzv_id=bench'"$port"' --rdzv_conf=is_host=$h \
        --max_restarts=0 '"$SCRIPT" >"$out" 2>&1
  else
    WIREUP_LAUNCH_TIMING=1 timeout 300 srun --mpi=pmix -N"$nodes" --ntasks-per-node=1 "$WL" \
      --nproc-per-node="$k" --python="$PY" -- "$SCRIPT" >"$out" 2>&1
  fi
  local rc=$?
  local n; n=$(grep -o "sum=[0-9]* ok" "$out" | wc -l)  # torchrun lines may interleave
  if [ "$rc" -ne 0 ] || [ "$n" -ne $((nodes * k)) ]; then
    echo "run failed: $method $nodes x $k (rc $rc, $n ranks ok)" >&2; tail -20 "$out" >&2
    echo "NaN NaN NaN NaN"; return
  fi
  python3 - "$out" "$t0" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
t0 = float(sys.argv[2])
done = max(float(x) for x in re.findall(r"done_at=([\d.]+)", text))
def phase(name):
    v = [float(x) for x in re.findall(name + r"=([\d.]+)", text)]
    return f"{max(v):.1f}" if v else "-"
print(f"{done - t0:.3f} {phase('pmix_init_ms')} {phase('fence_ms')} {phase('spawn_ms')}")
PY
}

CONFIGS="2x2 4x2 4x4"   # nodes x workers per node: 4, 8 and 16 ranks
echo "method nodes per_node rep seconds pmix_init_ms fence_ms spawn_ms" >"$WORK/raw.txt"
port=29600
for rep in $(seq "$REPS"); do
  for cfg in $CONFIGS; do
    for method in torchrun wireup; do   # interleaved: drift hits both alike
      nodes=${cfg%x*}; k=${cfg#*x}; port=$((port + 1))
      line=$(run_one "$method" "$nodes" "$k" "$port")
      echo "$method $nodes $k $rep $line" | tee -a "$WORK/raw.txt"
    done
  done
done

python3 - "$WORK/raw.txt" "$REPORT" "$REPS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
out = ["# wireup-launch vs torchrun: launch to first all_reduce", "",
       f"Gloo all_reduce script (tests/launcher/gloo_allreduce.py), srun on emulated nodes of one "
       f"2-core machine, {sys.argv[3]} interleaved repetitions. torchrun is Debian's 1.13.1 with "
       "the Python 3.11 Std.from_str patch (bench/launcher/torchrun_patch), c10d rendezvous, "
       "is_host=1 on node 0 only. Phases are the slowest agent's (ms).", "",
       "| ranks | nodes x per node | torchrun median s | wireup median s | ratio | "
       "wireup PMIx init ms | fence ms | spawn ms |", "|---|---|---|---|---|---|---|---|"]
ok = True
for cfg in sorted({(int(r[1]), int(r[2])) for r in rows}, key=lambda c: c[0] * c[1]):
    def med(method, col):
        v = [float(r[col]) for r in rows if r[0] == method and (int(r[1]), int(r[2])) == cfg
             and r[col] not in ("NaN", "-")]
        return statistics.median(v) if v else float("nan")
    t, w = med("torchrun", 4), med("wireup", 4)
    ratio = w / t if t == t and t > 0 else float("nan")
    ok = ok and ratio <= 0.5
    out.append(f"| {cfg[0]*cfg[1]} | {cfg[0]} x {cfg[1]} | {t:.2f} | {w:.2f} | {ratio:.2f} | "
               f"{med('wireup', 5):.1f} | {med('wireup', 6):.1f} | {med('wireup', 7):.1f} |")
out += ["", f"Target (wireup at most half of torchrun's median): {'met' if ok else 'NOT met'}", "",
        "Raw runs (seconds, phases in ms):", "", "```"] + [" ".join(r) for r in rows] + ["```"]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out[:12]))
PY
