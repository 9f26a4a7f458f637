#!/usr/bin/env bash
# The demo (docs/demo.md): on a fresh Debian machine, as root, one command
# installs the dependencies, builds wireup, starts a local 2-node Slurm cluster,
# installs wireup into it with the HyperPod lifecycle scripts, checks the
# collectives, prepares the demo corpus, trains a small Llama with FSDP on 2
# nodes x 2 ranks from the sbatch template, kills the job mid-run as a node
# failure would, resubmits it, shows it resume from the checkpoint, and ends
# with the loss curve (table + PNG), throughput, and where everything is. The
# cluster is stopped at the end, also on failure or Ctrl-C; the files stay.
#
# Settings: WIREUP_BUILD_DIR (build/), WIREUP_DEMO_DIR (BUILD_DIR/demo),
# WIREUP_DEMO_PORT (27810: slurmctld; the slurmds use the next two ports).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${WIREUP_BUILD_DIR:-$root/build}
bash "$root/.ci/deps.sh"
bash "$root/.ci/build.sh" "$build"

start=$SECONDS
demo=${WIREUP_DEMO_DIR:-$build/demo}
mkdir -p "$demo"
demo=$(realpath "$demo")
cluster=$root/tests/cluster/cluster.sh
cdir=$demo/cluster
node=$demo/node          # what the lifecycle installs: /usr/local, /var/lib/wireup, ...
fsx=$demo/fsx            # the shared file system: data, checkpoints, logs
python=/usr/bin/python3  # Debian's python3 (torch, matplotlib)
export WIREUP_CLUSTER_NODES=2 WIREUP_CLUSTER_PORT=${WIREUP_DEMO_PORT:-27810}
unset WIREUP_PLUGSTACK_LINE   # the cluster starts without wireup; the lifecycle adds it
waiters=()

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: FAILED: $*" >&2; exit 1; }
cleanup() {
  local rc=$?
  for p in "${waiters[@]}"; do kill "$p" 2>/dev/null || true; done
  bash "$cluster" stop "$cdir" >"$demo/cluster-stop.log" 2>&1 || true
  ((rc == 0)) || echo "demo: stopped the cluster (logs: $cdir/log)" >&2
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A fresh run: no checkpoints or logs of an earlier demo (the data set is kept).
rm -rf "$node" "$fsx/checkpoints" "$fsx/logs" "$demo/hyperpod" "$demo"/loss.png "$demo"/summary.txt \
  "$demo"/.shown.*
mkdir -p "$fsx/data" "$fsx/checkpoints" "$fsx/logs" "$demo/hyperpod"

say "a local Slurm cluster: 2 nodes (ip-127-0-0-2, ip-127-0-0-3), 4 CPUs each, no wireup yet"
bash "$cluster" start "$cdir"
eval "$(bash "$cluster" env "$cdir")"
sinfo -h -N -o '  %N %t, %c CPUs'

say "install wireup with the HyperPod lifecycle scripts (lifecycle/on_create.sh, as the controller)"
# HyperPod's two configs, from lifecycle/samples; this machine plays the controller.
cp "$root/lifecycle/samples/resource_config.json" "$root/lifecycle/samples/provisioning_parameters.json" \
  "$demo/hyperpod/"
controller_ip=$("$python" -c '
import json, sys
p = json.load(open(sys.argv[1] + "/provisioning_parameters.json"))
r = json.load(open(sys.argv[1] + "/resource_config.json"))
g = [g for g in r["InstanceGroups"] if g["Name"] == p["controller_group"]][0]
print(g["Instances"][0]["CustomerIpAddress"])' "$demo/hyperpod")
mkdir -p "$node"
(
  cd "$demo/hyperpod"
  # Paths of the node, moved under DEMO_DIR/node; slurm.conf is the local cluster's;
  # daemon reloads (scontrol reconfigure, slurmd restarts) go to the local cluster.
  WIREUP_NODE_IPS=$controller_ip \
    SAGEMAKER_RESOURCE_CONFIG_PATH=$demo/hyperpod/resource_config.json \
    WIREUP_PROVISIONING_PARAMETERS=$demo/hyperpod/provisioning_parameters.json \
    WIREUP_SLURM_CONF=$cdir/slurm.conf WIREUP_PREFIX=$node/usr/local \
    WIREUP_PLUGIN_DIR=$node/usr/local/lib/slurm WIREUP_STATE_DIR=$node/var/lib/wireup \
    WIREUP_LOG_DIR=$node/var/log/provision WIREUP_FROM_BUILD=$build \
    WIREUP_LIFECYCLE_DAEMON_CMD=$root/tests/lifecycle/cluster_daemons.sh \
    CLUSTER_DAEMON_LOG=$node/daemon-calls.log WIREUP_TEST_CLUSTER_DIR=$cdir \
    WIREUP_TEST_CLUSTER_SCRIPT=$cluster \
    bash "$root/lifecycle/on_create.sh" >"$demo/lifecycle.log" 2>&1
) || { sed 's/^/  /' "$demo/lifecycle.log"; die "the lifecycle install failed (log: $node/var/log/provision/provisioning.log)"; }
# Its log, without the one line per installed file.
grep -v ': wrote ' "$demo/lifecycle.log" | sed 's/^/  /'
echo "  ($(grep -c ': wrote ' "$demo/lifecycle.log") files written under $node)"
echo "  plugstack.conf now holds:"
sed 's/^/    /' "$cdir/plugstack.conf"
echo "  srun --help:"
srun --help | grep -- '--wireup' | sed 's/^/  /' || die "srun --help lists no --wireup after the install"

bin=$node/usr/local/bin
templates=$node/usr/local/share/wireup/sbatch-templates
[[ -f $templates/llama-fsdp.sbatch ]] || templates=$root/sbatch-templates
export WIREUP_BIN_DIR=$bin PYTHON=$python

# sbatch_wait NAME ARGS...: submit with --wait in the background; sets JOB and WAITER.
sbatch_wait() {
  local name=$1 i
  shift
  rm -f "$demo/$name".{id,rc}
  (
    rc=0
    sbatch --parsable --wait "$@" >"$demo/$name.id" || rc=$?
    echo "$rc" >"$demo/$name.rc"
  ) &
  WAITER=$!
  waiters+=("$WAITER")
  for ((i = 0; i < 100; i++)); do
    JOB=
    [[ -s $demo/$name.id ]] && JOB=$(tr -dc '0-9' <"$demo/$name.id")
    [[ -n $JOB ]] && return 0
    [[ -s $demo/$name.rc ]] && break
    sleep 0.1
  done
  die "sbatch $name was refused"
}
# show_new FILE [EVERY]: print the job log's progress lines written since the last
# call (every EVERY-th [train] line); the offset is kept in DEMO_DIR/.shown.NAME.
show_new() {
  local file=$1 seen=0 total state=$demo/.shown.${1##*/}
  [[ -f $file ]] || return 0
  [[ -s $state ]] && seen=$(cat "$state")
  total=$(wc -l <"$file")
  ((total > seen)) || return 0
  sed -n "$((seen + 1)),${total}p" "$file" | awk -v every="${2:-1}" '
    /^\[train\]/ { split($2, a, "[=/]"); if (a[2] == 1 || a[2] % every == 0) print "  " $0; next }
    /^\[(config|resume|checkpoint|stop|val|summary|job|check|wiring|prep)\]|^wireup-prep: [0-9]|rror|FAIL/ { print "  " $0 }'
  echo "$total" >"$state"
}
# follow FILE PID [EVERY]: show_new every half second while PID runs, then once more.
follow() {
  while kill -0 "$2" 2>/dev/null; do
    show_new "$1" "${3:-1}"
    sleep 0.5
  done
  show_new "$1" "${3:-1}"
}
job_rc() { cat "$demo/$1.rc" 2>/dev/null || echo "?"; }

say "collective check: allreduce-check.sbatch on 2 nodes x 2 ranks (Gloo on CPU)"
MAX_BYTES=4194304 ITERS=3 WARMUP=1 sbatch_wait check -N 2 --ntasks-per-node=2 -t 5 \
  -o "$fsx/logs/allreduce-check-%j.out" "$templates/allreduce-check.sbatch"
follow "$fsx/logs/allreduce-check-$JOB.out" "$WAITER"
wait "$WAITER" || true
[[ $(job_rc check) == 0 ]] || die "the collective check failed ($fsx/logs/allreduce-check-$JOB.out)"

say "data: prep-data.sbatch INPUT=demo (Debian's fortunes, a tokenizer trained on them)"
data=$fsx/data/fortunes
INPUT=demo DATA_DIR=$data sbatch_wait prep -t 10 -o "$fsx/logs/prep-data-%j.out" "$templates/prep-data.sbatch"
follow "$fsx/logs/prep-data-$JOB.out" "$WAITER"
wait "$WAITER" || true
[[ $(job_rc prep) == 0 ]] || die "data preparation failed ($fsx/logs/prep-data-$JOB.out)"

# The training run: a small Llama (the tiny preset, 128-token context, the corpus'
# 8000-token vocabulary: 1.1 M parameters), 2 nodes x 2 ranks, full sharding.
steps=150 freq=20
export WIREUP_PRESET=tiny DATA_DIR=$data CKPT_DIR=$fsx/checkpoints/llama-demo \
  LOG_DIR=$fsx/logs/llama-demo MAX_STEPS=$steps CHECKPOINT_FREQ=$freq KEEP_CHECKPOINTS=3 \
  VALIDATION_FREQ=50 \
  WIREUP_TRAIN_ARGS='--max_context_width 128 --train_batch_size 4 --lr 3e-3 --min_lr 3e-4 --warmup_steps 10 --validation_batches 4 --num_threads 1'
train=(-N 2 --ntasks-per-node=2 -t 15 -o "$LOG_DIR/llama-fsdp-%j.out" "$templates/llama-fsdp.sbatch")
mkdir -p "$LOG_DIR"
last_step() { { sed -n 's/^\[train\] step=\([0-9]*\)\/.*/\1/p' "$1" 2>/dev/null || true; } | tail -n 1; }
newest_ckpt() {
  local d n=0
  for d in "$CKPT_DIR"/step-*/; do [[ -f ${d}metadata.json ]] && n=$((10#${d: -9:8})); done
  echo "$n"
}

say "train: sbatch llama-fsdp.sbatch (tiny Llama, $steps steps, checkpoint every $freq, 2 nodes x 2 ranks)"
sbatch_wait first "${train[@]}"
job1=$JOB out1=$LOG_DIR/llama-fsdp-$job1.out
# Let it pass its second checkpoint and go on a few steps, then take it down.
kill_at=$((2 * freq)) ready=0
for ((i = 0; i < 2400; i++)); do
  s=$(last_step "$out1")
  if (($(newest_ckpt) >= kill_at && ${s:-0} >= kill_at + 7)); then ready=1; break; fi
  [[ -s $demo/first.rc ]] && { show_new "$out1"; die "the first run ended before step $((kill_at + 7)) ($out1)"; }
  show_new "$out1" 10
  sleep 0.25
done
((ready)) || die "the first run did not reach step $((kill_at + 7)) in 10 minutes ($out1)"
step=$(squeue -h -s -j "$job1" -o '%i' | grep -E '^[0-9]+\.[0-9]+$' | head -n 1)
[[ -n $step ]] || die "job $job1 has no running step"
say "node failure: SIGKILL to every rank of job $job1 at step $(last_step "$out1") (scancel --signal=KILL $step): nothing is saved"
scancel --signal=KILL "$step"
follow "$out1" "$WAITER" 10
wait "$WAITER" || true
n1=$(newest_ckpt)
k1=$(last_step "$out1")
echo "  job $job1 ended (exit $(job_rc first)) after step $k1; newest complete checkpoint: step $n1"
for d in "$CKPT_DIR"/step-*/; do
  [[ -d $d ]] || continue
  if [[ -f ${d}metadata.json ]]; then echo "    ${d%/}"; else echo "    ${d%/} (incomplete: no metadata.json)"; fi
done

say "resubmit the same script: sbatch llama-fsdp.sbatch (on HyperPod, srun --auto-resume=1 does this)"
sbatch_wait second "${train[@]}"
job2=$JOB out2=$LOG_DIR/llama-fsdp-$job2.out
follow "$out2" "$WAITER" 10
wait "$WAITER" || true
[[ $(job_rc second) == 0 ]] || die "the resumed run failed ($out2)"
grep -Eq "^\[resume\].*step=0*$n1\b" "$out2" || die "job $job2 did not say it resumed from step $n1 ($out2)"
first2=$(sed -n 's/^\[train\] step=\([0-9]*\)\/.*/\1/p' "$out2" | head -n 1)
((first2 == n1 + 1)) || die "job $job2 started at step $first2, not $((n1 + 1))"
echo "  job $job2 resumed from the step-$n1 checkpoint: steps $((n1 + 1))-$k1 were lost with the node and done again, steps 1-$n1 were not"

say "summary"
{
  echo "jobs: $job1 (killed after step $k1), $job2 (resumed from step $n1, finished step $(last_step "$out2"))"
  "$python" "$templates/metrics-report.py" --sort --rows 16 --png "$demo/loss.png" \
    --title "wireup demo: tiny Llama, FSDP on 2 nodes x 2 ranks, killed and resumed" \
    "$LOG_DIR"/metrics-*.jsonl
  echo
  echo "where things are:"
  echo "  loss plot:     $demo/loss.png"
  echo "  checkpoints:   $CKPT_DIR ($(cd "$CKPT_DIR" && echo step-*))"
  echo "  job logs:      $out1"
  echo "                 $out2"
  echo "  metrics:       $LOG_DIR/metrics-$job1.jsonl, metrics-$job2.jsonl"
  echo "  per-rank logs: $LOG_DIR/ranks-<job>/attempt_0/<rank>/"
  echo "  data:          $data (manifest.json, shards, tokenizer.model)"
  echo "  installed:     $node/usr/local (lifecycle log: $node/var/log/provision/provisioning.log)"
  echo "  cluster logs:  $cdir/log"
} 2>&1 | tee "$demo/summary.txt"
echo
echo "demo: ok in $((SECONDS - start)) s after the build (the cluster stops now; the files stay in $demo)"
