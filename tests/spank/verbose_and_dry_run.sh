#!/usr/bin/env bash
# Users can see what was injected and why: --wireup-verbose in the task's
# stderr, and wireup-env as a dry run inside any step.
source "$(dirname "$0")/lib.sh"
plugstack default=off nccl_debug=WARN

err=$(timeout 30 srun -N2 -n2 --wireup-verbose true 2>&1 >/dev/null)
contains "rank 0 explains MASTER_PORT" "$err" "wireup[0]: MASTER_PORT="
contains "rank 1 explains RANK" "$err" "wireup[1]: RANK=1  (set: global task id)"
contains "notes say why EFA is off" "$err" "wireup[0]: # no EFA device"

out=$(MASTER_PORT=777 timeout 30 srun -N2 -n2 "$WIREUP_ENV_TOOL" --plugstack "$CLUSTER/plugstack.conf")
echo "$out"
contains "dry run: rank" "$out" "RANK=1  (set: global task id)"
contains "dry run: user value kept" "$out" "MASTER_PORT=777  (kept user value: already set by the user)"
contains "dry run: admin nccl_debug" "$out" "NCCL_DEBUG=WARN  (set: plugstack.conf)"
# The dry run and the plugin agree on every value they set.
# (two steps, so two ports: compare the address and the ranks)
real=$(timeout 30 srun -N2 -n3 -w "${NODES[1]},${NODES[2]}" --wireup bash -c 'echo "$RANK $LOCAL_RANK $MASTER_ADDR"' | sort)
dry=$(timeout 30 srun -N2 -n3 -w "${NODES[1]},${NODES[2]}" bash -c "eval \"\$('$WIREUP_ENV_TOOL' --plugstack '$CLUSTER/plugstack.conf' --export)\"; "'echo "$RANK $LOCAL_RANK $MASTER_ADDR"' | sort)
check "dry run agrees with the plugin" "$dry" "$real"
set +e
msg=$("$WIREUP_ENV_TOOL" 2>&1); rc=$?
set -e
check "outside a step: exit 2" "$rc" 2
contains "outside a step: says what is missing" "$msg" "SLURM_JOB_ID is not set"
nodes_idle
finish
