# shellcheck shell=bash
# Helpers for spank_wireup tests on the local cluster (sourced, not run).
# CTest provides SLURM_CONF, WIREUP_TEST_CLUSTER_DIR, WIREUP_TEST_CLUSTER_SCRIPT,
# WIREUP_PLUGIN (the built .so) and WIREUP_ENV_TOOL (wireup-env).
set -euo pipefail

: "${WIREUP_TEST_CLUSTER_DIR:?run through ctest}" "${WIREUP_PLUGIN:?}"
CLUSTER=$WIREUP_TEST_CLUSTER_DIR
# The cluster's nodes in order, and their addresses (cluster.sh env): NODES[0] is the
# first node whatever the naming style (tests/cluster/cluster.sh WIREUP_CLUSTER_NAMING).
eval "$(bash "$WIREUP_TEST_CLUSTER_SCRIPT" env "$CLUSTER")"
IFS=, read -r -a NODES <<<"$WIREUP_TEST_CLUSTER_NODES"
IFS=, read -r -a ADDRS <<<"$WIREUP_TEST_CLUSTER_ADDRS"
# addr_of NODE -> its NodeAddr
addr_of() {
  local i
  for i in "${!NODES[@]}"; do [[ ${NODES[i]} != "$1" ]] || { echo "${ADDRS[i]}"; return; }; done
}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=../lib/assert.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.sh"
# shellcheck source=../lib/cluster_nodes.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster_nodes.sh"

# The plugin line the test wants; srun and slurmstepd re-read it per step.
plugstack() {
  bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$CLUSTER" "optional $WIREUP_PLUGIN $*"
}


# Per-task KEY=VALUE lines of chosen variables, one task per line, by rank.
# shellcheck disable=SC2034  # used by the scripts that source this
TASK_VARS='echo "P=$SLURM_PROCID N=$SLURM_NODEID L=$SLURM_LOCALID RANK=${RANK-} LOCAL_RANK=${LOCAL_RANK-} WORLD_SIZE=${WORLD_SIZE-} LOCAL_WORLD_SIZE=${LOCAL_WORLD_SIZE-} GROUP_RANK=${GROUP_RANK-} NODE_RANK=${NODE_RANK-} GROUP_WORLD_SIZE=${GROUP_WORLD_SIZE-} MASTER_ADDR=${MASTER_ADDR-} MASTER_PORT=${MASTER_PORT-} TNAEH=${TORCH_NCCL_ASYNC_ERROR_HANDLING-} OMP=${OMP_NUM_THREADS-} NCCL_DEBUG=${NCCL_DEBUG-}"'

# field LINE KEY -> value of KEY=value in LINE
field() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" <<<"$1"; }

