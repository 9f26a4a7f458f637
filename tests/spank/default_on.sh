#!/usr/bin/env bash
# Admin default=on: tasks are wired without the option; --wireup=off opts out;
# admin setenv/forceenv and nccl_debug apply.
source "$(dirname "$0")/lib.sh"
plugstack default=on nccl_debug=WARN setenv=WIREUP_TEST_SET=admin forceenv=NCCL_IB_DISABLE=1
trap 'plugstack default=off; rm -rf "$WORK"' EXIT

out=$(timeout 60 srun -N2 -n2 bash -c 'echo "rank=${RANK-unset} dbg=$NCCL_DEBUG set=$WIREUP_TEST_SET ib=$NCCL_IB_DISABLE"' | sort)
echo "$out"
check "wired without --wireup" "$(grep -c '^rank=[01] dbg=WARN set=admin ib=1$' <<<"$out")" 2
out=$(NCCL_DEBUG=TRACE WIREUP_TEST_SET=mine NCCL_IB_DISABLE=0 timeout 30 srun -N1 -n1 \
  bash -c 'echo "dbg=$NCCL_DEBUG set=$WIREUP_TEST_SET ib=$NCCL_IB_DISABLE"')
check "user env beats admin default, forceenv beats user" "$out" "dbg=TRACE set=mine ib=1"
out=$(NCCL_DEBUG=TRACE timeout 30 srun -N1 -n1 --wireup-nccl-debug=info bash -c 'echo "$NCCL_DEBUG"')
check "explicit --wireup-nccl-debug beats the environment" "$out" "INFO"
out=$(timeout 30 srun -N1 -n1 --wireup=off bash -c 'echo "${RANK-unset}"')
check "--wireup=off opts out" "$out" "unset"
nodes_idle
finish
