#!/usr/bin/env bash
# scale_wiring.sh PLUGIN WIREUP_LAUNCH LAUNCHER_TEST_DIR: 32 emulated nodes x 8 tasks
# (256 ranks, light workers, no torch) wired three ways on the scale cluster, every rank
# checked: srun --wireup (the SPANK plugin), wireup-launch agent mode (one agent a node,
# 8 workers each) and wireup-launch exec mode (srun --mpi=pmix -n 256). CTest runs it on
# its own 32-node cluster (tests/cluster/CMakeLists.txt, fixture slurm_cluster_scale).
set -uo pipefail
PLUGIN=${1:?usage: scale_wiring.sh PLUGIN WIREUP_LAUNCH LAUNCHER_TEST_DIR}
WL=${2:?}
LT=${3:?}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${WIREUP_TEST_CLUSTER_DIR:?run through ctest}"
eval "$(bash "$HERE/cluster.sh" env "$WIREUP_TEST_CLUSTER_DIR")"
IFS=, read -r -a NODES <<<"$WIREUP_TEST_CLUSTER_NODES"
IFS=, read -r -a ADDRS <<<"$WIREUP_TEST_CLUSTER_ADDRS"
N=32 PER=8 WORLD=256
((${#NODES[@]} >= N)) || { echo "FAIL: the cluster has ${#NODES[@]} nodes, need $N" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wireup-scale.XXXXXX")
trap 'bash "$HERE/cluster.sh" plugstack "$WIREUP_TEST_CLUSTER_DIR"; rm -rf "$TMP"' EXIT
# shellcheck source=../lib/assert.sh
source "$(dirname "$0")/../lib/assert.sh"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# 1. srun --wireup: 256 tasks, block distribution, every variable checked per rank.
bash "$HERE/cluster.sh" plugstack "$WIREUP_TEST_CLUSTER_DIR" "optional $PLUGIN default=off"
t0=$(now_ms)
# shellcheck disable=SC2016 # expanded by the tasks
timeout 120 srun -N$N --ntasks-per-node=$PER --wireup sh -c 'echo "$SLURM_PROCID $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $SLURMD_NODENAME"' \
  >"$TMP/spank" 2>"$TMP/spank.err"
rc=$?
echo "srun --wireup: $N x $PER tasks in $(($(now_ms) - t0)) ms, exit $rc"
((rc == 0)) || { cat "$TMP/spank.err"; fail "srun --wireup exited $rc"; }
# Node order of the step = the order of the cluster's nodes (one step, all nodes).
bad=$(awk -v world=$WORLD -v per=$PER -v n=$N -v nodes="${NODES[*]:0:N}" -v addr0="${ADDRS[0]}" '
  BEGIN { split(nodes, node, " ") }
  { p = $1; seen[p]++
    want_node = node[int(p / per) + 1]
    if ($2 != p || $3 != p % per || $4 != world || $5 != per || $6 != int(p / per) ||
        $7 != n || $8 != addr0 || $10 != want_node)
      print "rank " p ": " $0 " (expected node " want_node ", master " addr0 ")"
    port[$9] = 1 }
  END { for (p = 0; p < world; p++) if (seen[p] != 1) print "rank " p " seen " seen[p] + 0 " times"
        c = 0; for (x in port) c++; if (c != 1) print c " different MASTER_PORTs" }' "$TMP/spank")
if [[ -z $bad ]]; then pass "srun --wireup: all $WORLD ranks wired correctly"; else
  head -n 20 <<<"$bad" >&2
  fail "srun --wireup: $(grep -c . <<<"$bad") wrong line(s)"
fi
bash "$HERE/cluster.sh" plugstack "$WIREUP_TEST_CLUSTER_DIR"

# 2. wireup-launch agent mode: one agent a node, 8 workers each.
t0=$(now_ms)
timeout 120 srun --mpi=pmix -N$N --ntasks-per-node=1 "$WL" --nproc-per-node=$PER -- \
  "$LT/print_env.sh" >"$TMP/agent" 2>&1
rc=$?
echo "wireup-launch agent mode: $N x $PER workers in $(($(now_ms) - t0)) ms, exit $rc"
if ((rc == 0)) && python3 "$LT/check_env_lines.py" "$TMP/agent" $WORLD $PER $N agent; then
  pass "agent mode: all $WORLD ranks wired correctly"
else
  tail -n 30 "$TMP/agent" >&2
  fail "agent mode (exit $rc)"
fi

# 3. wireup-launch exec mode: srun starts all 256 ranks, each execs its program.
t0=$(now_ms)
timeout 120 srun --mpi=pmix -N$N --ntasks-per-node=$PER "$WL" -- "$LT/print_env.sh" >"$TMP/exec" 2>&1
rc=$?
echo "wireup-launch exec mode: $N x $PER ranks in $(($(now_ms) - t0)) ms, exit $rc"
if ((rc == 0)) && python3 "$LT/check_env_lines.py" "$TMP/exec" $WORLD $PER $N exec; then
  pass "exec mode: all $WORLD ranks wired correctly"
else
  tail -n 30 "$TMP/exec" >&2
  fail "exec mode (exit $rc)"
fi

states=$(timeout 30 sinfo -h -N -o '%t' | sort | uniq -c | paste -sd' ' -)
echo "node states afterwards: $states"
finish
