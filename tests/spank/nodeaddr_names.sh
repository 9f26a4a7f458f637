#!/usr/bin/env bash
# Node names known only through slurm.conf (NodeName=gpu01 NodeAddr=127.0.0.2, no hosts
# entry, no DNS): srun --wireup, wireup-env and wireup-launch's SLURM_* mode take
# MASTER_ADDR from the slurm.conf the step's Slurm loaded, and say so. A node no source
# knows gets an error naming every source tried. Runs its own 2-node cluster in the
# nodeaddr naming style beside the shared one (other port, own directory).
source "$(dirname "$0")/lib.sh"
: "${WIREUP_CLUSTER_PORT_NODEADDR:=26850}"
OWN=$WORK/cluster
chmod 755 "$WORK"  # munged wants its socket path searchable by all
stop_own() { WIREUP_CLUSTER_NAMING=nodeaddr bash "$WIREUP_TEST_CLUSTER_SCRIPT" stop "$OWN" >/dev/null 2>&1 || true; }
trap 'stop_own; rm -rf "$WORK"' EXIT

WIREUP_CLUSTER_NAMING=nodeaddr WIREUP_CLUSTER_NODES=2 WIREUP_CLUSTER_PORT=$WIREUP_CLUSTER_PORT_NODEADDR \
  WIREUP_PLUGSTACK_LINE="optional $WIREUP_PLUGIN default=off" \
  bash "$WIREUP_TEST_CLUSTER_SCRIPT" start "$OWN"
eval "$(bash "$WIREUP_TEST_CLUSTER_SCRIPT" env "$OWN")"
check "nodes are named gpu01,gpu02" "$WIREUP_TEST_CLUSTER_NODES" "gpu01,gpu02"
if getent ahostsv4 gpu01 >/dev/null; then
  echo "SKIP: gpu01 resolves on this machine; the test needs a name only slurm.conf knows"
  exit 0
fi

out=$(timeout 30 srun -N2 -n4 --wireup bash -c "$TASK_VARS" | sort)
echo "$out"
check "every task wired" "$(grep -c 'RANK=[0-3] ' <<<"$out")" 4
check "one MASTER_ADDR: gpu01's NodeAddr" "$(sed -n 's/.*MASTER_ADDR=\([^ ]*\).*/\1/p' <<<"$out" | sort -u)" "127.0.0.2"

err=$(timeout 30 srun -N2 -n2 --wireup-verbose true 2>&1 >/dev/null)
contains "verbose names the source" "$err" \
  "wireup[1]: MASTER_ADDR=127.0.0.2  (set: first node of the step, from slurm.conf NodeAddr ($OWN/slurm.conf:"

dry=$(timeout 30 srun -N1 -n1 -w gpu02 "$WIREUP_ENV_TOOL" --plugstack "$OWN/plugstack.conf")
contains "dry run on gpu02 alone: gpu02's own NodeAddr, and its source" "$dry" \
  "MASTER_ADDR=127.0.0.3  (set: first node of the step, from slurm.conf NodeAddr ($OWN/slurm.conf:"

if [[ -n ${WIREUP_LAUNCH:-} ]]; then
  # shellcheck disable=SC2016  # expanded by the task's shell
  launch=$(timeout 30 srun -N2 -n2 -w 'gpu[01-02]' "$WIREUP_LAUNCH" --verbose -- \
    bash -c 'echo "rank=$RANK addr=$MASTER_ADDR"' 2>"$WORK/launch.err" | sort)
  check "wireup-launch SLURM_* mode: both ranks get gpu01's NodeAddr" "$launch" \
    "$(printf 'rank=0 addr=127.0.0.2\nrank=1 addr=127.0.0.2')"
  contains "wireup-launch says where the address came from" "$(cat "$WORK/launch.err")" \
    "MASTER_ADDR 127.0.0.2 for node gpu01, from slurm.conf NodeAddr"
fi

# Nobody knows "nowhere01": a clear error naming each source, before anything runs.
fake_step=(SLURM_JOB_ID=9 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0
  SLURM_STEP_NUM_TASKS=1 SLURM_STEP_NUM_NODES=1 SLURM_STEP_TASKS_PER_NODE=1
  SLURM_STEP_NODELIST=nowhere01 SLURM_CONF="$OWN/slurm.conf")
set +e
msg=$(env "${fake_step[@]}" "$WIREUP_ENV_TOOL" 2>&1)
rc=$?
set -e
check "unknown node: wireup-env exits 2" "$rc" 2
contains "unknown node: the node is named" "$msg" "cannot find an IPv4 address for node 'nowhere01'"
contains "unknown node: the resolver was asked" "$msg" "resolver (hosts file, DNS): no IPv4 address"
contains "unknown node: the cluster's slurm.conf was read" "$msg" "$OWN/slurm.conf: no NodeName line names it"
contains "unknown node: says what the user can do" "$msg" "or export MASTER_ADDR=IPV4 before srun"
out=$(env "${fake_step[@]}" MASTER_ADDR=10.9.9.9 "$WIREUP_ENV_TOOL")
contains "unknown node: the user's own MASTER_ADDR stands in" "$out" \
  "MASTER_ADDR=10.9.9.9  (kept user value: already set by the user)"
if [[ -n ${WIREUP_LAUNCH:-} ]]; then
  set +e
  msg=$(env "${fake_step[@]}" "$WIREUP_LAUNCH" -- touch "$WORK/ran" 2>&1)
  rc=$?
  set -e
  check "unknown node: wireup-launch exits 2" "$rc" 2
  contains "unknown node: wireup-launch names the node" "$msg" "node 'nowhere01'"
  check "unknown node: nothing was launched" "$([[ -e $WORK/ran ]] && echo ran || echo none)" none
fi

nodes_idle
finish
