#!/usr/bin/env bash
# A bad option value stops srun/sbatch before any task starts; a broken admin
# argument disables the plugin but never breaks slurmd or drains a node.
source "$(dirname "$0")/lib.sh"
plugstack default=off

marker=$WORK/task-ran
set +e
msg=$(timeout 30 srun -N2 -n2 --wireup-efa=bogus touch "$marker" 2>&1); rc=$?
set -e
((rc != 0)) && pass "srun exits non-zero ($rc)" || fail "srun accepted --wireup-efa=bogus"
contains "message names option and values" "$msg" "--wireup-efa: invalid value 'bogus' (expected auto, on or off)"
[[ ! -e $marker ]] && pass "no task started" || fail "a task ran despite the bad option"
set +e
msg=$(timeout 30 srun -N1 --wireup-nccl-debug=LOUD true 2>&1); rc=$?
set -e
((rc != 0)) && pass "bad --wireup-nccl-debug rejected" || fail "--wireup-nccl-debug=LOUD accepted"
contains "names NCCL levels" "$msg" "VERSION, WARN, INFO, TRACE or off"
printf '#!/bin/bash\n#SBATCH --wireup=maybe\ntouch %s\n' "$marker" >"$WORK/bad.sh"
set +e
msg=$(sbatch "$WORK/bad.sh" 2>&1); rc=$?
set -e
((rc != 0)) && pass "sbatch exits non-zero" || fail "sbatch accepted --wireup=maybe: $msg"
contains "sbatch message" "$msg" "--wireup: invalid value 'maybe' (expected on or off)"
nodes_idle

# Broken admin arguments: jobs still run (unwired), slurmd restarts fine.
plugstack default=on efa=sometimes
trap 'plugstack default=off; rm -rf "$WORK"' EXIT
out=$(timeout 30 srun -N2 -n2 bash -c 'echo "${RANK-unset}"' | sort -u)
check "jobs run, nothing injected" "$out" "unset"
msg=$(timeout 30 srun -N1 -n1 --wireup true 2>&1)
contains "--wireup says why it has no effect" "$msg" "efa: invalid value 'sometimes'"
log=$CLUSTER/log/slurmd.${NODES[0]}.log
before=$(grep -c "spank_wireup: efa: invalid value" "$log" || true)
bash "$WIREUP_TEST_CLUSTER_SCRIPT" restart-node "$CLUSTER" "${NODES[0]}"
after=$(grep -c "spank_wireup: efa: invalid value" "$log" || true)
check "slurmd start logs the bad argument once" "$((after - before))" 1
timeout 30 srun -N2 -n2 true && pass "jobs run after slurmd restart" || fail "srun failed after restart"
nodes_idle
plugstack port_base=40000 port_range=100
msg=$(timeout 30 srun -N1 -n1 --wireup bash -c 'echo "${RANK-unset}"' 2>&1)
contains "ephemeral overlap refused" "$msg" "overlap the ephemeral range"
finish
