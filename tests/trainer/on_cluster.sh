#!/usr/bin/env bash
# wireup-train on the real Slurm cluster, wired by plain `srun --wireup` and by
# wireup-launch (PMIx agent mode, also with its agent store): hybrid sharding across 2 nodes x 2 ranks
# reproduces one process's loss sequence, also on a chat data set (SFT); wireup-train eval on 2
# nodes gives one process's loss.
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

# SFT on a chat data set (packed conversations, masked loss): 2 nodes x 2 ranks, hybrid
# (shared memory inside a node, Gloo between), give one process's losses.
python3 "$(dirname "$0")/token_data.py" "$WORK/chat" --vocab 500 --train 1200,400 \
  --validation 300 --chat 30 --seed 3
sft=(--preset tiny --dataset "$WORK/chat" --max_steps 6 --num_threads 1 --lr 1e-3)
"$WIREUP_TRAIN" "${sft[@]}" --train_batch_size 4 | losses >"$WORK/sft1"
timeout 180 srun -N2 --ntasks-per-node=2 --wireup "$WIREUP_TRAIN" "${sft[@]}" \
  --train_batch_size 1 --sharding_strategy hybrid >"$WORK/sft.out"
grep -q '^\[train\] step=1/6 .* trained_tokens=[1-9]' "$WORK/sft.out" ||
  fail "SFT on 2 nodes: no trained_tokens: $(head -3 "$WORK/sft.out")"
losses <"$WORK/sft.out" >"$WORK/sft4"
same_losses "SFT (chat data set) on 2 nodes x 2, hybrid = one process" "$WORK/sft1" "$WORK/sft4" 1e-5

# --agent-store: agent 0 holds MASTER_PORT, so every rank must be a store client.
timeout 180 srun -N2 --ntasks-per-node=1 --mpi=pmix "$WIREUP_LAUNCH" --nproc-per-node=2 \
  --agent-store --no-prefix --local-ranks-filter=0 -- "$WIREUP_TRAIN" "${common[@]}" \
  --train_batch_size 1 >"$WORK/store.out"
losses <"$WORK/store.out" >"$WORK/store"
same_losses "wireup-launch --agent-store 2x2 = one process" "$WORK/w1" "$WORK/store" 1e-5

# eval of a checkpoint on 2 nodes (Gloo between them; 13 chunks: one rank pads) = one process.
python3 "$(dirname "$0")/token_data.py" "$WORK/data" --vocab 500 --train 2000 --validation 3000
"$WIREUP_TRAIN" --preset tiny --vocab_size 512 --max_context_width 32 --dataset "$WORK/data" \
  --max_steps 2 --num_threads 1 --checkpoint_dir "$WORK/ck" >/dev/null
ev=(eval --resume_from_checkpoint "$WORK/ck" --data "$WORK/data" --max_context_width 32
  --eval_batches 37 --eval_batch_size 3 --num_threads 1)
"$WIREUP_TRAIN" "${ev[@]}" --metrics_file "$WORK/eval1.json" >/dev/null
timeout 180 srun -N2 --ntasks-per-node=1 --wireup "$WIREUP_TRAIN" "${ev[@]}" \
  --metrics_file "$WORK/eval2.json" >"$WORK/eval2.out" || true
loss_of() { python3 -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))["loss"]))' "$1"; }
one=$(loss_of "$WORK/eval1.json" || true) two=$(loss_of "$WORK/eval2.json" 2>/dev/null || true)
[[ -n $one && $one == "$two" ]] && pass "eval: srun --wireup on 2 nodes = one process ($one)" ||
  fail "eval: 2 nodes $two vs one process $one: $(cat "$WORK/eval2.out")"

set +e
msg=$(timeout 60 srun -N2 -n2 "$WIREUP_TRAIN" "${common[@]}" 2>&1); rc=$?
set -e
((rc != 0)) && [[ $msg == *"add --wireup"* ]] && pass "srun without --wireup: clear error" ||
  fail "srun without --wireup: rc=$rc $msg"
finish
