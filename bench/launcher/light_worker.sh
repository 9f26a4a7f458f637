#!/bin/bash
# The launch benchmark's light worker: one WIRED line with the rank wiring it was started
# with, its Slurm task number, and the wall-clock time it started at (bash's EPOCHREALTIME,
# no fork). No torch.
echo "WIRED task=${SLURM_PROCID:-unset} rank=${RANK:-unset} world=${WORLD_SIZE:-unset} local_rank=${LOCAL_RANK:-unset}" \
  "local_world=${LOCAL_WORLD_SIZE:-unset} master=${MASTER_ADDR:-unset}:${MASTER_PORT:-unset}" \
  "at=${EPOCHREALTIME/,/.}"
