#!/usr/bin/env bash
# srun -N2 -n4 --wireup: every task gets correct, distinct rendezvous values.
source "$(dirname "$0")/lib.sh"
plugstack default=off

out=$(timeout 60 srun -N2 -n4 --wireup bash -c "$TASK_VARS" | sort -t= -k2 -n)
echo "$out"
check "four tasks" "$(wc -l <<<"$out")" 4
check "ranks 0..3" "$(while read -r l; do field "$l" RANK; done <<<"$out" | sort | tr '\n' ' ')" "0 1 2 3 "
ports=()
while read -r line; do
  p=$(field "$line" P); n=$(field "$line" N); l=$(field "$line" L)
  check "rank $p: RANK = SLURM_PROCID" "$(field "$line" RANK)" "$p"
  check "rank $p: LOCAL_RANK = SLURM_LOCALID" "$(field "$line" LOCAL_RANK)" "$l"
  check "rank $p: WORLD_SIZE" "$(field "$line" WORLD_SIZE)" 4
  check "rank $p: GROUP_RANK = node" "$(field "$line" GROUP_RANK)" "$n"
  check "rank $p: NODE_RANK = node" "$(field "$line" NODE_RANK)" "$n"
  check "rank $p: GROUP_WORLD_SIZE" "$(field "$line" GROUP_WORLD_SIZE)" 2
  on_node=$(grep -c " N=$n " <<<"$out")
  check "rank $p: LOCAL_WORLD_SIZE = tasks on its node" "$(field "$line" LOCAL_WORLD_SIZE)" "$on_node"
  check "rank $p: TORCH_NCCL_ASYNC_ERROR_HANDLING" "$(field "$line" TNAEH)" 1
  if ((on_node > 1)); then check "rank $p: OMP_NUM_THREADS" "$(field "$line" OMP)" 1; fi
  ports+=("$(field "$line" MASTER_PORT)")
  addr=$(field "$line" MASTER_ADDR)
  [[ $addr =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] && pass "rank $p: MASTER_ADDR is IPv4" ||
    fail "rank $p: MASTER_ADDR '$addr' is not an IPv4 literal"
done <<<"$out"
# First node of the step -> its NodeAddr
first_node=$(scontrol show hostnames "$(timeout 30 srun -N2 -n2 bash -c 'echo $SLURM_STEP_NODELIST' | head -1)" | head -1)
check "MASTER_ADDR is the step's first node" "$(field "$(head -1 <<<"$out")" MASTER_ADDR)" \
  "$(addr_of "$first_node")"
check "one MASTER_PORT for the step" "$(printf '%s\n' "${ports[@]}" | sort -u | wc -l)" 1
port=${ports[0]}
((port > 60999 && port <= 65535)) && pass "MASTER_PORT $port outside ephemeral range" ||
  fail "MASTER_PORT $port inside the ephemeral range"

# The step's first node, not the job's: a step on the second node only.
second=$(timeout 30 srun -N1 -n1 -w "${NODES[1]}" --wireup bash -c 'echo $MASTER_ADDR')
check "single-node step on ${NODES[1]}" "$second" "${ADDRS[1]}"

# Without the option (default=off) nothing is injected; --wireup=off too.
none=$(timeout 30 srun -N1 -n2 bash -c 'echo "${RANK-unset} ${WIREUP_INJECTED-unset}"' | sort -u)
check "no --wireup, default=off: nothing" "$none" "unset unset"
none=$(timeout 30 srun -N1 -n1 --wireup=off bash -c 'echo "${RANK-unset}"')
check "--wireup=off: nothing" "$none" "unset"
nodes_idle
finish
