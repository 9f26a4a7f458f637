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

# --wireup= (empty) is an error, not "on".
set +e
msg=$(timeout 30 srun -N1 --wireup= touch "$marker" 2>&1); rc=$?
set -e
((rc != 0)) && pass "--wireup= rejected ($rc)" || fail "srun accepted --wireup="
contains "--wireup= says empty" "$msg" "--wireup=: empty value (expected on or off, or --wireup alone for on)"
[[ ! -e $marker ]] && pass "no task started after --wireup=" || fail "a task ran despite --wireup="

# A 100 KB value: srun fails, and our message carries a 64-byte excerpt, not the
# value (Slurm itself repeats it once: "Invalid --wireup-efa argument: ...").
big=$(head -c 100000 /dev/zero | tr '\0' x)
set +e
msg=$(timeout 30 srun -N1 --wireup-efa="$big" true 2>&1); rc=$?
set -e
((rc != 0)) && pass "100 KB value rejected" || fail "srun accepted a 100 KB --wireup-efa"
contains "100 KB value cut short" "$msg" "--wireup-efa: invalid value 'xxxxxxxx"
contains "100 KB value: size given" "$msg" "... (100000 bytes) (expected auto, on or off)"
full=$(awk 'length($0) >= 100000 { n++ } END { print n + 0 }' <<<"$msg")
((full <= 1)) && pass "the full value appears $full time(s)" || fail "the full value appears $full times"

# A bad value that bypasses srun (a user-set _SLURM_SPANK_OPTION_* variable)
# reaches slurmstepd: the step runs unwired and rank 0's stderr says why, once.
set +e
out=$(_SLURM_SPANK_OPTION_wireup_wireup_efa=bogus timeout 30 srun -N2 -n2 \
  bash -c 'echo "RANK=${RANK-unset}"' 2>"$WORK/err"); rc=$?
set -e
err=$(cat "$WORK/err")
check "bypassed bad value: tasks run" "$rc" 0
check "bypassed bad value: unwired" "$(sort -u <<<"$out")" "RANK=unset"
contains "bypassed bad value: told on the task's stderr" "$err" \
  "wireup: --wireup-efa: invalid value 'bogus' (expected auto, on or off); this step runs without wireup's variables"
check "told once (rank 0 only)" "$(grep -c "this step runs without wireup's variables" <<<"$err")" 1
set +e
err=$(_SLURM_SPANK_OPTION_wireup_wireup_efa=$big timeout 30 srun -N1 -n1 true 2>&1 >/dev/null)
set -e
contains "bypassed 100 KB value: cut short on stderr" "$err" "(100000 bytes)"
check "bypassed 100 KB value: never whole" "$(awk 'length($0) >= 100000' <<<"$err" | wc -l)" 0
nodes_idle

# A key given twice: slurmd warns at start naming the key, and the last one wins.
plugstack default=off efa=auto efa=off
trap 'plugstack default=off; rm -rf "$WORK"' EXIT
log=$CLUSTER/log/slurmd.${NODES[0]}.log
bash "$WIREUP_TEST_CLUSTER_SCRIPT" restart-node "$CLUSTER" "${NODES[0]}"
contains "slurmd warns about the duplicate key" "$(cat "$log")" \
  "spank_wireup: warning: plugstack.conf argument 'efa' given twice ('auto', then 'off'): the last one is used"
set +e
msg=$(timeout 30 srun -N1 -n1 "$WIREUP_ENV_TOOL" --plugstack "$CLUSTER/plugstack.conf" 2>&1); rc=$?
set -e
check "dry run with a duplicate key: exit 0" "$rc" 0
contains "dry run warns too" "$msg" "wireup-env: warning: plugstack.conf argument 'efa' given twice"
contains "the last one wins" "$msg" "# EFA variables off (efa=off)"

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
lacks "the job epilog logs nothing more per job" "$(cat "$log")" "job_epilog"
plugstack port_base=40000 port_range=100
msg=$(timeout 30 srun -N1 -n1 --wireup bash -c 'echo "${RANK-unset}"' 2>&1)
contains "ephemeral overlap refused" "$msg" "overlap the ephemeral range"
finish
