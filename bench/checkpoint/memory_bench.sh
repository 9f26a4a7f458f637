#!/usr/bin/env bash
# Memory snapshots (docs/memory-snapshots.md) against durable checkpoints, in
# one run on this machine, a 106M-parameter Llama shape whose training state
# (fp32 parameters + AdamW moments) is 1.27 GB over 4 ranks:
# 1. recovery: 2 nodes x 2 ranks on a local Slurm cluster, srun + wireup-launch
#    --max_restarts 1; one rank killed with SIGKILL once step 6 is trained and
#    the step-5 state (checkpoint, snapshot) is complete; the time from the kill to the resumed [resume]
#    line and to the next trained step, resuming from memory (memory snapshots
#    every 5 steps beside the checkpoints) against resuming from disk (the
#    checkpoint alone, its files evicted from the page cache first, as a read
#    from remote storage would be);
# 2. cost: 4 ranks as 2 emulated nodes, 60 steps, --memory_checkpoint_freq 10
#    against none: the extra step time per snapshot, for the first two snapshots
#    (steps 2..30: new files) and the next three (steps 31..60: each written over
#    a retired snapshot's files, as every later one in a long run is); and the
#    same 4 ranks as one node, whose snapshots have no replica to send.
# Interleaved, REPS of each; medians. Usage: memory_bench.sh BUILD_DIR OUT.md [REPS]
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-2}}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
train=$build/trainer/wireup-train launch=$build/launcher/wireup-launch
[[ -x $train && -x $launch ]] || { echo "no $train or $launch: build first" >&2; exit 1; }
dir=$(mktemp -d "${WIREUP_BENCH_DIR:-/tmp}/wireup-bench-mem.XXXXXX")
chmod 755 "$dir"  # munged refuses a socket under a directory others cannot enter
cluster=$root/tests/cluster/cluster.sh
trap 'bash "$cluster" stop "$dir/cluster" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
shape=(--max_context_width 128 --vocab_size 32000 --hidden_width 768 --num_layers 8 --num_heads 12
       --num_key_value_heads 12 --intermediate_size 2048 --synthetic_data --num_threads 1
       --train_batch_size 1)

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- 1. recovery on the cluster ---------------------------------------------------
WIREUP_CLUSTER_NODES=2 WIREUP_CLUSTER_PORT=${WIREUP_BENCH_CLUSTER_PORT:-27850} \
  bash "$cluster" start "$dir/cluster" >/dev/null || { echo "the cluster did not start" >&2; exit 1; }
eval "$(bash "$cluster" env "$dir/cluster")"

# stamp: each line of stdin prefixed with the time it arrived.
stamp() { while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }

# recover memory|disk: prints "KILL_TO_RESUME_S KILL_TO_STEP_S"
recover() {
  local how=$1 w=$dir/$1 extra=() victim="" t_kill pid
  rm -rf "$w" && mkdir -p "$w"
  # memory: snapshots every 5 steps, durable checkpoints only at the end; disk: every 5 steps
  extra=(--checkpoint_freq 5)
  [[ $how == memory ]] &&
    extra=(--checkpoint_freq 1000 --memory_checkpoint_freq 5)  # DIR: /dev/shm/wireup-JOBID
  timeout 900 srun --mpi=none -N2 --ntasks-per-node=1 "$launch" --nproc-per-node=2 --no-prefix \
    --local-ranks-filter=0 --max_restarts 1 -- "$train" "${shape[@]}" --max_steps 16 \
    --checkpoint_dir "$w/ck" --resume_from_checkpoint auto "${extra[@]}" \
    2>"$w/err" | stamp >"$w/log" &
  local job=$!
  for _ in $(seq 6000); do  # step 6 trained, the step-5 state complete on both nodes
    if grep -q '\[train\] step=6/' "$w/log" 2>/dev/null &&
      { [[ $how == disk ]] ||
        (($(find "/dev/shm/wireup-$(squeue -h -o %i | head -1)" -name complete 2>/dev/null | wc -l) == 2)); }; then
      break
    fi
    sleep 0.1
  done
  for pid in $(pgrep -f -- "--checkpoint_dir $w/ck" || true); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == wireup-train ]] && victim=$pid
  done
  [[ -n $victim ]] || { echo "recover $how: no rank to kill" >&2; cat "$w/err" >&2; return 1; }
  if [[ $how == disk ]]; then  # evict the checkpoint's pages: a read from remote storage
    /usr/bin/python3 -c '
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        fd = os.open(os.path.join(root, f), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$w/ck"
  fi
  t_kill=$EPOCHREALTIME
  kill -9 "$victim"
  wait "$job" || { echo "recover $how: the run failed" >&2; tail "$w/err" >&2; return 1; }
  grep -q "source=$how" "$w/log" || { echo "recover $how: $(grep resume "$w/log")" >&2; return 1; }
  awk -v t0="$t_kill" '
    $2 == "[resume]" && $3 ~ /^step=/ && !r { r = $1 - t0 }
    r && $2 == "[train]" && !s { s = $1 - t0 }
    END { printf "%.2f %.2f\n", r, s }' "$w/log"
}

# --- 2. per-step cost ---------------------------------------------------------------
# steps NODES MEMORY_FLAGS...: the summed step_time_s of steps 2..30 and of 31..60 of
# 4 ranks as NODES nodes (a job id of their own: DIR /dev/shm/wireup-JOB); with snapshots
# also the within-run figures of the new-file snapshots (10, 20) and the recycled
# ones (30, 40, 50): the extra time of the 3 steps after a snapshot (those its
# writer overlaps) over the mean of the other steps 2..60, and rank 0's writer
# CPU and wall seconds from its "[memory] snapshot step=S" lines; then the stall.
steps() {
  local nodes=$1 port r pids=() rc=0 w=$dir/cost job=$((900000 + RANDOM))
  shift
  local per=$((4 / nodes))
  rm -rf "$w" && mkdir -p "$w"
  port=$(free_port)
  for ((r = 0; r < 4; r++)); do
    SLURM_JOB_ID=$job SLURMD_NODENAME=n$((r / per)) RANK=$r WORLD_SIZE=4 LOCAL_RANK=$((r % per)) \
      LOCAL_WORLD_SIZE=$per MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 900 "$train" \
      "${shape[@]}" --max_steps 60 "$@" >"$w/out.$r" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  ((rc == 0)) || { echo "cost run failed: $*" >&2; tail -3 "$w/out.0" >&2; return 1; }
  {
    sed -n 's/^\[train\] step=\([0-9]*\)\/.* step_time_s=\([0-9.]*\).*/t \1 \2/p' "$w/out.0"
    sed -n 's/^\[memory\] snapshot step=\([0-9]*\) committed write_s=\([0-9.]*\) writer_cpu_s=\([0-9.]*\)/s \1 \2 \3/p' "$w/out.0"
    sed -n 's/^\[memory\] snapshots=[0-9]* stall_s=\([0-9.]*\).*/x \1/p' "$w/out.0"
  } | awk '
    $1 == "t" { t[$2] = $3 } $1 == "s" { wall[$2] = $3; cpu[$2] = $4; snaps = 1 } $1 == "x" { stall = $2 }
    function kind(s) { return s <= 20 ? "n" : "r" }
    END {
      for (i = 2; i <= 60; i++) { if (i <= 30) a += t[i]; else b += t[i] }
      printf "%.2f %.2f", a, b
      if (!snaps) { print ""; exit }
      for (i = 2; i <= 60; i++)
        if (i < 11 || (i - 1) % 10 >= 3) { n++; sum += t[i] }
      m = sum / n
      for (s = 10; s <= 50; s += 10) {
        k = kind(s); c[k]++
        for (i = s + 1; i <= s + 3; i++) x[k] += t[i] - m
        wc[k] += cpu[s]; ww[k] += wall[s]
      }
      printf " %.2f %.2f %.2f %.2f %.2f %.2f %.3f %.3f\n", x["n"] / c["n"], x["r"] / c["r"],
        wc["n"] / c["n"], ww["n"] / c["n"], wc["r"] / c["r"], ww["r"] / c["r"], m, stall
    }'
}

mem_resume=() mem_step=() disk_resume=() disk_step=() base=() base2=() snap=() snap2=()
xn=() xr=() cn=() wn=() cr=() wr=() med=() stall=() xr1=() cr1=() wr1=() med1=()
for ((i = 0; i < reps; i++)); do
  read -r a b < <(recover memory) && mem_resume+=("$a") mem_step+=("$b")
  read -r a b < <(recover disk) && disk_resume+=("$a") disk_step+=("$b")
  read -r a b < <(steps 2) && base+=("$a") base2+=("$b")
  read -r a b c d e f g h k l < <(steps 2 --memory_checkpoint_freq 10) &&
    snap+=("$a") snap2+=("$b") xn+=("$c") xr+=("$d") cn+=("$e") wn+=("$f") cr+=("$g") wr+=("$h") \
      med+=("$k") stall+=("$l")
  # the same 4 ranks as one node: no replica to send or receive
  read -r _ _ _ d _ _ g h k _ < <(steps 1 --memory_checkpoint_freq 10) &&
    xr1+=("$d") cr1+=("$g") wr1+=("$h") med1+=("$k")
done
bash "$cluster" stop "$dir/cluster" >/dev/null 2>&1 || true
mr=$(median "${mem_resume[@]}") ms=$(median "${mem_step[@]}")
dr=$(median "${disk_resume[@]}") ds=$(median "${disk_step[@]}")
mb=$(median "${base[@]}") mm=$(median "${snap[@]}")
mb2=$(median "${base2[@]}") mm2=$(median "${snap2[@]}")
st=$(median "${stall[@]}") md=$(median "${med[@]}")
# Between runs: steps 2..30 hold the snapshots of steps 10 and 20 (new files),
# steps 31..60 those of 30, 40 and 50 (recycled files; 60's runs after the last
# step): the extra time per snapshot, and as a share of the 10 steps between two.
per=$(awk -v a="$mm" -v b="$mb" 'BEGIN {printf "%.2f", (a - b) / 2}')
cost=$(awk -v p="$per" -v b="$mb" 'BEGIN {printf "%.1f", p / (10 * b / 29) * 100}')
per2=$(awk -v a="$mm2" -v b="$mb2" 'BEGIN {printf "%.2f", (a - b) / 3}')
cost2=$(awk -v p="$per2" -v b="$mb2" 'BEGIN {printf "%.1f", p / (10 * b / 30) * 100}')
# Within the run: the same as a share of 10 of its mean steps (MEAN X...).
within() {
  local m=$1
  shift
  awk -v x="$(median "$@")" -v m="$m" 'BEGIN {printf "%.2f | %.1f %%", x, x / (10 * m) * 100}'
}
{
  echo "## checkpoint: recovery from memory against disk, and the snapshots' cost"
  echo
  echo "A 106M-parameter Llama shape (hidden 768, 8 layers, vocabulary 32000, context 128):"
  echo "1.27 GB of fp32 parameters and AdamW moments over 4 ranks (317 MB a rank), CPU, Gloo;"
  echo "$reps interleaved repetitions on $(nproc) cores, medians."
  echo
  echo "**Recovery** (2 nodes x 2 ranks on a local Slurm cluster, \`srun\` + \`wireup-launch"
  echo "--max_restarts 1\`, a rank killed with SIGKILL once step 6 is trained and step 5's state is"
  echo "complete; memory snapshots every 5 steps against checkpoints every 5 steps, whose files are"
  echo "evicted from the page cache of the local disk first):"
  echo
  echo "| from the kill to | memory, s | disk, s | memory / disk |"
  echo "| --- | --- | --- | --- |"
  echo "| the [resume] line (restart, start-up, load) | $mr | $dr | $(awk -v a="$mr" -v b="$dr" 'BEGIN {printf "%.2f", a / b}') |"
  echo "| the next trained step | $ms | $ds | $(awk -v a="$ms" -v b="$ds" 'BEGIN {printf "%.2f", a / b}') |"
  echo
  echo "**Cost** (4 ranks as 2 emulated nodes, 60 steps, \`--memory_checkpoint_freq 10\` against"
  echo "none; the summed step times; goal: at most 3 % of the 10 steps between two snapshots):"
  echo
  echo "| steps | snapshots | with, s | without, s | a snapshot, s | of 10 steps |"
  echo "| --- | --- | --- | --- | --- | --- |"
  echo "| 2..30 | 10, 20: new files | $mm | $mb | $per | +$cost % |"
  echo "| 31..60 | 30, 40, 50: over a retired snapshot's files | $mm2 | $mb2 | $per2 | +$cost2 % |"
  echo
  echo "Within the run with snapshots (paired, free of the drift between runs): the extra time of"
  echo "the 3 steps after a snapshot over the mean of its other steps ($md s), and rank 0's"
  echo "writer thread (\`[memory] snapshot step=S\` lines):"
  echo
  echo "| snapshots | a snapshot, s | of 10 steps | writer CPU, s | writer wall, s |"
  echo "| --- | --- | --- | --- | --- |"
  echo "| 10, 20: new files | $(within "$md" "${xn[@]}") | $(median "${cn[@]}") | $(median "${wn[@]}") |"
  echo "| 30, 40, 50: recycled files | $(within "$md" "${xr[@]}") | $(median "${cr[@]}") | $(median "${wr[@]}") |"
  echo "| 30, 40, 50, the 4 ranks as one node (no replica; mean step $(median "${med1[@]}") s) | $(within "$(median "${med1[@]}")" "${xr1[@]}") | $(median "${cr1[@]}") | $(median "${wr1[@]}") |"
  echo
  echo "Here the 4 ranks already keep both cores busy, so the writer's CPU is training's loss;"
  echo "the training thread waited $st s in all (\`stall_s\` of the [memory] line). Where a core"
  echo "is free for it (a GPU node's), the writer's work overlaps training."
} >"$out"
cat "$out"
