#!/usr/bin/env bash
# llama-fsdp.sbatch on the cluster, 2 nodes x 2 ranks, tiny Llama on a small
# corpus, checkpoints every 10 steps:
#   1. missing data: the job fails at once and says what to do;
#   2. first run (wireup-launch): every rank SIGKILLed after its step-20
#      checkpoint, as a node failure ends them;
#   3. the same script resubmitted (LAUNCHER=srun, spank_wireup) resumes from
#      the newest complete checkpoint, repeats the lost steps with the same
#      losses, and is cancelled with plain scancel (SIGTERM: it checkpoints on
#      the way out);
#   4. resubmitted again with LAUNCH_MPI=none (wireup-launch under srun --mpi=none,
#      wired from Slurm's SLURM_* facts, as on clusters without PMIx), it resumes
#      from that checkpoint and completes; old checkpoints are pruned;
#      metrics-report.py reads the three jobs.
# Memory snapshots are on (the default, every 50 steps, in MEMORY_CHECKPOINT_DIR:
# lib.sh); each resubmission is a new job, whose memory holds nothing yet, so
# it resumes from disk, and the job that completes removes its snapshots.
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
T=$TEMPLATES/llama-fsdp.sbatch
"$WIREUP_BIN_DIR/wireup-prep" -q --vocab-size 500 --text-docs paragraph --val-fraction 0.05 \
  -o "$WORK/data" /usr/share/common-licenses
export WIREUP_PRESET=tiny DATA_DIR=$WORK/data CKPT_DIR=$WORK/ckpt LOG_DIR=$WORK/logs \
  MAX_STEPS=120 CHECKPOINT_FREQ=10 KEEP_CHECKPOINTS=2 VALIDATION_FREQ=30 \
  WIREUP_TRAIN_ARGS='--num_threads 1 --train_batch_size 2 --lr 3e-3 --warmup_steps 5'
args=(-N 2 --ntasks-per-node=2 -t 10)

# The [train] lines' step numbers and losses of a job's output: "STEP LOSS" per line.
train_lines() {
  sed -n 's/^\[train\] step=\([0-9]*\)\/[0-9]* loss=\([0-9.]*\).*/\1 \2/p' "$WORK/$1.out" 2>/dev/null
}
last_step() { train_lines "$1" | tail -n 1 | cut -d' ' -f1; }
first_step() { train_lines "$1" | head -n 1 | cut -d' ' -f1; }
# The newest complete checkpoint's step (a step dir with metadata.json), or 0.
newest_ckpt() {
  local d n=0
  for d in "$CKPT_DIR"/step-*/; do
    [[ -f ${d}metadata.json ]] && n=$((10#${d: -9:8}))
  done
  echo "$n"
}
# wait_progress NAME CKPT STEP SECONDS: until checkpoint CKPT is complete and the
# job has logged STEP; fails the test (and returns 1) otherwise.
wait_progress() {
  local i s
  for ((i = 0; i < $4 * 10; i++)); do
    s=$(last_step "$1")
    if [[ -f $CKPT_DIR/$(printf 'step-%08d' "$2")/metadata.json ]] && ((${s:-0} >= $3)); then
      return 0
    fi
    [[ -s $WORK/$1.rc ]] && break
    sleep 0.1
  done
  fail "$1: no checkpoint of step $2 and step $3 within $4 s (last step $(last_step "$1"))"
  show "$1"
  return 1
}

# 1. No data.
rc=$(DATA_DIR=$WORK/none run_job nodata 60 "${args[@]}" "$T")
expect "no data: job fails" test "$rc" != 0
contains "no data: says what to do" "$(cat "$WORK/nodata.out")" "prepare the data first (prep-data.sbatch)"
rc=$(LAUNCH_MPI=pmi2 run_job badmpi 60 "${args[@]}" "$T")
check "LAUNCH_MPI=pmi2: exit 2" "$rc" 2
contains "LAUNCH_MPI=pmi2: named" "$(cat "$WORK/badmpi.out")" "LAUNCH_MPI must be auto, pmix or none (got 'pmi2')"

# 2. First run, its ranks killed as a failed node kills them: nothing saved on the way out.
submit first "${args[@]}" "$T"
wait_progress first 20 23 240 && kill_ranks "$(cat "$WORK/first.id")"
rc=$(wait_job first 60)
show first
expect "first run: ended by the kill (exit $rc)" test "$rc" != 0
n1=$(newest_ckpt)
k1=$(last_step first)
contains "first run: fresh start" "$(cat "$WORK/first.out")" "newest_checkpoint=none"
contains "first run: LAUNCH_MPI=auto found Slurm's pmix plugin" "$(cat "$WORK/first.out")" \
  "launcher=wireup-launch mpi=pmix "
contains "first run: memory snapshots every 50 steps (the default)" "$(cat "$WORK/first.out")" " memory=50 "
contains "first run: in the job's own directory under MEMORY_CHECKPOINT_DIR" "$(cat "$WORK/first.out")" \
  "--memory_checkpoint_freq 50 --memory_checkpoint_dir $MEMORY_CHECKPOINT_DIR/wireup-$(cat "$WORK/first.id")"
# The kill usually lands between checkpoints; a tiny step takes ~30 ms, so now
# and then it lands just after one (k1 = n1): then no step is repeated.
expect "first run: checkpoint $n1 is not newer than its last step $k1" test "$n1" -ge 20 -a "$k1" -ge "$n1"

# 3. Resubmitted: resumes from n1, repeats steps n1+1..k1 exactly; then plain scancel.
LAUNCHER=srun submit second "${args[@]}" "$T"
next=$(((n1 / 10 + 1) * 10))
wait_progress second "$next" $((next + 2)) 240 && scancel "$(cat "$WORK/second.id")"
rc=$(wait_job second 60)
show second
out=$(cat "$WORK/second.out")
contains "second run: the template found the checkpoint" "$out" "newest_checkpoint=$CKPT_DIR/$(printf 'step-%08d' "$n1")"
expect "second run: wireup-train says it resumed from step $n1" grep -Eq "^\[resume\].*step=0*$n1\b" "$WORK/second.out"
expect "second run: a new job resumes from disk" grep -Eq "^\[resume\] step=0*$n1 source=disk\b" "$WORK/second.out"
check "second run: first step" "$(first_step second)" $((n1 + 1))
join <(train_lines first | sed -n "/^$((n1 + 1)) /,\$p") <(train_lines second) >"$WORK/overlap"
if ((k1 == n1)); then
  expect "the kill landed right after checkpoint $n1: no step to repeat" test ! -s "$WORK/overlap"
elif awk 'BEGIN { worst = 0 } { d = $2 - $3; if (d < 0) d = -d; if (d > worst) worst = d; n++ }
     END { printf "%d steps, largest difference %g\n", n, worst; exit !(n > 0 && worst <= 1e-4) }' \
  "$WORK/overlap" >"$WORK/overlap.verdict"; then
  pass "repeated steps $((n1 + 1))..$k1 have the first run's losses ($(cat "$WORK/overlap.verdict"))"
else
  fail "repeated steps differ from the first run: $(cat "$WORK/overlap.verdict")"
  cat "$WORK/overlap" >&2
fi
n2=$(newest_ckpt)
k2=$(last_step second)
expect "scancel (SIGTERM): checkpoint of the last step reached ($n2 >= $k2)" test "$n2" -ge "$k2"

# 4. Resubmitted again, the agents without PMIx: resumes from n2 and completes.
rc=$(LAUNCH_MPI=none run_job third 300 "${args[@]}" "$T")
show third
check "third run: job completes" "$rc" 0
contains "third run: srun --mpi=none" "$(cat "$WORK/third.out")" "[job] srun --mpi=none "
expect "third run: resumed from step $n2" grep -Eq "^\[resume\].*step=0*$n2\b" "$WORK/third.out"
check "third run: first step" "$(first_step third)" $((n2 + 1))
check "third run: last step" "$(last_step third)" 120
contains "third run: summary" "$(cat "$WORK/third.out")" "[summary] steps="
complete=$(find "$CKPT_DIR" -mindepth 2 -maxdepth 2 -name metadata.json | wc -l)
expect "KEEP_CHECKPOINTS=2: $complete complete checkpoints left" test "$complete" -le 2
expect "final checkpoint step-00000120" test -f "$CKPT_DIR/step-00000120/metadata.json"
expect "third run: its memory snapshots removed at the end" \
  test ! -e "$MEMORY_CHECKPOINT_DIR/wireup-$(cat "$WORK/third.id")"
for j in first second third; do
  expect "metrics file of the $j job" test -s "$LOG_DIR/metrics-$(cat "$WORK/$j.id").jsonl"
done

# The report over the three jobs.
report=$("$PYTHON" "$TEMPLATES/metrics-report.py" --sort --png "$WORK/loss.png" "$LOG_DIR"/metrics-*.jsonl 2>&1) ||
  fail "metrics-report.py failed: $report"
echo "$report"
contains "report: the second job resumed" "$report" "resumed after step $n1"
contains "report: the third job resumed" "$report" "resumed after step $n2"
contains "report: loss table" "$report" "loss curve:"
if "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
  expect "report: PNG written" test -s "$WORK/loss.png"
fi
nodes_idle
finish
