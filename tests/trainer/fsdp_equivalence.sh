#!/usr/bin/env bash
# The same global batch gives the same loss sequence at world 1, 2 and 4, for
# full and hybrid sharding, with and without recompute; accumulation and
# clipping give the updates of the unsharded computation; shared memory and
# Gloo give the same run.
source "$(dirname "$0")/lib.sh"
common=(--preset tiny --synthetic_data --max_steps 20 --num_threads 1 --lr 1e-3 --warmup_steps 3)

train 1 "${common[@]}" --train_batch_size 4 | losses >"$WORK/w1"
[[ $(wc -l <"$WORK/w1") == 20 ]] && pass "world 1: 20 steps" || fail "world 1 did not run 20 steps"

# (one host: hybrid here shards within the 2 or 4 local ranks; the cluster
# test runs hybrid across 2 nodes)
for s in full hybrid; do
  train 2 "${common[@]}" --train_batch_size 2 --sharding_strategy "$s" >"$WORK/w2$s.out"
  losses <"$WORK/w2$s.out" >"$WORK/w2$s"
  same_losses "world 2 $s = world 1" "$WORK/w1" "$WORK/w2$s" 1e-5
  train 4 "${common[@]}" --train_batch_size 1 --sharding_strategy "$s" \
    | losses >"$WORK/w4$s"
  same_losses "world 4 $s = world 1" "$WORK/w1" "$WORK/w4$s" 1e-5
done
# One host: the ranks' collectives go through shared memory by default (world 2 full above
# ran with no WIREUP_CPU_COMM, full being the default strategy); Gloo (WIREUP_CPU_COMM=gloo)
# gives the same run.
grep -q '^\[comm\] group=world ranks=2 transport=shm' "$WORK/w2full.out" &&
  pass "one host: transport=shm" || fail "one host: no '[comm] ... transport=shm' line"
for n in 2 4; do
  WIREUP_CPU_COMM=gloo train "$n" "${common[@]}" --train_batch_size $((4 / n)) >"$WORK/gloo$n.out"
  grep -q "^\[comm\] group=world ranks=$n transport=gloo" "$WORK/gloo$n.out" &&
    pass "WIREUP_CPU_COMM=gloo: transport=gloo" || fail "WIREUP_CPU_COMM=gloo: no transport=gloo line"
  losses <"$WORK/gloo$n.out" >"$WORK/gloo$n"
  same_losses "world $n over Gloo = world 1" "$WORK/w1" "$WORK/gloo$n" 1e-5
done
if out=$(WIREUP_CPU_COMM=tcp train 2 "${common[@]}" --train_batch_size 2 2>&1); then
  fail "WIREUP_CPU_COMM=tcp was accepted"
else
  grep -q "WIREUP_CPU_COMM=tcp: expected shm or gloo" <<<"$out" &&
    pass "WIREUP_CPU_COMM=tcp: refused by name" || fail "WIREUP_CPU_COMM=tcp: unclear error: $out"
fi
# A segment is the file /wireup-CREATORPID-N (a memory snapshot DIR, wireup-JOBID, is a
# directory). Tests running beside this one (on a cluster
# node, say) have live segments: only those whose creator has exited count.
left=$(find /dev/shm -maxdepth 1 -type f -name 'wireup-[0-9]*' -newer "$WORK/w1" -printf '%f\n' 2>/dev/null |
  while IFS=- read -r _ pid _; do kill -0 "$pid" 2>/dev/null || echo "wireup-$pid"; done)
[[ -z $left ]] && pass "no shared-memory segment left behind" || fail "segments left in /dev/shm: $left"

train 2 "${common[@]}" --train_batch_size 2 --activation_checkpointing 1 | losses >"$WORK/ac"
same_losses "activation checkpointing = without" "$WORK/w1" "$WORK/ac" 1e-5
train 2 "${common[@]}" --train_batch_size 2 --prefetch 0 | losses >"$WORK/nopf"
same_losses "no prefetch = prefetch" "$WORK/w1" "$WORK/nopf" 1e-5

# Accumulation: 2 micro-steps of 2 = one step of 4, on one rank or two.
train 1 "${common[@]}" --train_batch_size 2 --grad_accum 2 | losses >"$WORK/acc"
same_losses "grad accumulation 2x2 = 1x4" "$WORK/w1" "$WORK/acc" 1e-5
train 2 "${common[@]}" --train_batch_size 1 --grad_accum 2 | losses >"$WORK/acc2"
same_losses "world 2, accumulation 2x1 = world 1" "$WORK/w1" "$WORK/acc2" 1e-5

# Clipping: a limit below the norm changes the run, identically on 1 and 4 ranks.
train 1 "${common[@]}" --train_batch_size 4 --grad_clip 0.05 | losses >"$WORK/c1"
train 4 "${common[@]}" --train_batch_size 1 --grad_clip 0.05 | losses >"$WORK/c4"
same_losses "clipped: world 4 = world 1" "$WORK/c1" "$WORK/c4" 1e-5
if cmp -s "$WORK/w1" "$WORK/c1"; then fail "clipping changed nothing"; else pass "clipping changes the run"; fi
finish
