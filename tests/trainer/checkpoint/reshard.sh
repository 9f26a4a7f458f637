#!/usr/bin/env bash
# Resharding on load: a checkpoint taken at one world size and strategy
# resumes at another, and the losses continue as the uninterrupted run's.
source "$(dirname "$0")/lib.sh"
args=(--preset tiny --synthetic_data --max_steps 12 --num_threads 1)
# global batch 4 sequences everywhere
batch() { echo $((4 / $1)); }

# case NAME FROM_WORLD FROM_LOCAL FROM_SHARDING TO_WORLD TO_LOCAL TO_SHARDING
# The first run (steps 1-6) of a layout an earlier case ran already is not run again: the
# case starts from a copy (cp -a) of that run's checkpoint directory.
case_() {
  local name=$1 w1=$2 l1=$3 s1=$4 w2=$5 l2=$6 s2=$7 dir=$WORK/$1 first=$WORK/first-$2-$3-$4
  if [[ -d $first ]]; then
    cp -a "$first" "$dir"
  else
    spawn "$w1" "$l1" 29741 "${args[@]}" --train_batch_size "$(batch "$w1")" --sharding_strategy "$s1" \
      --checkpoint_dir "$dir" --stop_after_step 6 >/dev/null || true
    cp -a "$dir" "$first"
  fi
  spawn "$w2" "$l2" 29742 "${args[@]}" --train_batch_size "$(batch "$w2")" --sharding_strategy "$s2" \
    --checkpoint_dir "$dir" --resume_from_checkpoint auto >"$dir.log"
  grep -q '^\[resume\] step=6 ' "$dir.log" && pass "$name: resumed at step 6" || fail "$name: $(grep resume "$dir.log")"
  losses <"$dir.log" >"$dir.second"
  tail -n 6 "$WORK/ref" >"$WORK/ref.tail"
  same_losses "$name: steps 7-12 continue the uninterrupted run" "$WORK/ref.tail" "$dir.second" 1e-5
}
mkdir -p "$WORK"
"$WIREUP_TRAIN" "${args[@]}" --train_batch_size 4 | losses >"$WORK/ref"
case_ two_to_one 2 2 full 1 1 full
case_ one_to_four 1 1 full 4 4 full
case_ four_to_two 4 4 full 2 2 full
case_ full_to_hybrid 4 4 full 4 2 hybrid
case_ hybrid_to_full 4 2 hybrid 2 2 full
finish
