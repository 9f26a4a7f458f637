#!/usr/bin/env bash
# #SBATCH --wireup reaches the job's sruns (not the batch script itself);
# concurrent steps of one job get different ports; the user's MASTER_PORT wins.
source "$(dirname "$0")/lib.sh"
plugstack default=off

cat >"$WORK/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --wireup
#SBATCH -N2 -n4
echo "batch RANK=${RANK-unset}"
srun bash -c 'echo "plain rank=$RANK world=$WORLD_SIZE port=$MASTER_PORT"'
# two steps at once, each on its own node
mapfile -t nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
srun -N1 -n1 -w "${nodes[0]}" --overlap bash -c 'sleep 1; echo "concurrent port=$MASTER_PORT"' &
srun -N1 -n1 -w "${nodes[1]}" --overlap bash -c 'sleep 1; echo "concurrent port=$MASTER_PORT"' &
wait
MASTER_PORT=12345 srun -n2 bash -c 'echo "user port=$MASTER_PORT"'
JOB
job=$(sbatch --parsable -o "$WORK/job.out" "$WORK/job.sh")
for _ in $(seq 120); do
  state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
  [[ $state == COMPLETED || $state == FAILED || $state == CANCELLED || $state == TIMEOUT ]] && break
  sleep 0.5
done
check "job state" "$state" COMPLETED
cat "$WORK/job.out"
out=$(cat "$WORK/job.out")
contains "batch script itself is not a rank" "$out" "batch RANK=unset"
check "srun in the job is wired" "$(grep -c '^plain rank=[0-3] world=4 port=6' <<<"$out")" 4
check "plain step: one port" "$(grep '^plain' <<<"$out" | sed 's/.*port=//' | sort -u | wc -l)" 1
ports=$(grep '^concurrent' <<<"$out" | sed 's/.*port=//' | sort -u | wc -l)
check "two concurrent steps: two ports" "$ports" 2
check "user's MASTER_PORT wins" "$(grep -c '^user port=12345$' <<<"$out")" 2
nodes_idle
finish
