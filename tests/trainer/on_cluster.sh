#!/usr/bin/env bash
# wireup-train on the real Slurm cluster, wired by plain `srun --wireup` and by
# wireup-launch (PMIx agent mode, also with its agent store): hybrid sharding across 2 nodes x 2 ranks
# reproduces one process's loss sequence.
source "$(dirname "$0")/lib.sh"
: "${WIREUP_PLUGIN:?}" "${WIREUP_TEST_CLUSTER_SCRIPT:?}" "${WIREUP_TEST_CLUSTER_DIR:?}"
bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$WIREUP_TEST_CLUSTER_DIR" "optional $WIREUP_PLUGIN default=off"
common=(--preset tiny --synthetic_data --max_steps 8 --num_threads 1 --lr 1e-3)

"$WIREUP_TRAIN" "${common[@]}" --train_batch_size 4 | losses >"$WORK/w1"
timeout 180 srun -N2 --ntasks-per-node=2 --wireup "$WIREUP_TRAIN" "${common[@]}" \
  --train_batch_size 1 --sharding_strategy hybrid >"$WORK/srun.out"
grep -q 'world=4 local_world=2 nodes=2 sharding=hybrid' "$WORK/srun.out" &&
  pass "srun --wireup: 4 ranks on 2 nodes, hybrid" || fail "layout: $(head -1 "$WORK/srun.out")"
losses <"$WORK/srun.out" >"$WORK/srun"
same_losses "srun --wireup hybrid 2x2 = one process" "$WORK/w1" "$WORK/srun" 1e-5

timeout 180 srun -N2 --ntasks-per-node=1 --mpi=pmix "$WIREUP_LAUNCH" --nproc-per-node=2 \
  --no-prefix --local-ranks-filter=0 -- "$WIREUP_TRAIN" "${common[@]}" --train_batch_size 1 \
  >"$WORK/launch.out"
grep -q 'world=4 local_world=2 nodes=2 sharding=full' "$WORK/launch.out" &&
  pass "wireup-launch: 4 ranks on 2 nodes" || fail "layout: $(head -1 "$WORK/launch.out")"
losses <"$WORK/launch.out" >"$WORK/launch"
same_losses "wireup-launch full 2x2 = one process" "$WORK/w1" "$WORK/launch" 1e-5

# --agent-store: agent 0 holds MASTER_PORT, so every rank must be a store client.
timeout 180 srun -N2 --ntasks-per-node=1 --mpi=pmix "$WIREUP_LAUNCH" --nproc-per-node=2 \
  --agent-store --no-prefix --local-ranks-filter=0 -- "$WIREUP_TRAIN" "${common[@]}" \
  --train_batch_size 1 >"$WORK/store.out"
losses <"$WORK/store.out" >"$WORK/store"
same_losses "wireup-launch --agent-store 2x2 = one process" "$WORK/w1" "$WORK/store" 1e-5

set +e
msg=$(timeout 60 srun -N2 -n2 "$WIREUP_TRAIN" "${common[@]}" 2>&1); rc=$?
set -e
((rc != 0)) && [[ $msg == *"add --wireup"* ]] && pass "srun without --wireup: clear error" ||
  fail "srun without --wireup: rc=$rc $msg"
finish
