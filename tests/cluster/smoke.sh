#!/usr/bin/env bash
# smoke.sh [DIR]: prove that the test cluster started by cluster.sh really works:
# multi-node srun, task ids, node naming/addresses, a batch job, srun --mpi=pmix,
# and that every node is idle (not drained) afterwards.
# DIR defaults to $WIREUP_TEST_CLUSTER_DIR.

set -u
set -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${1:-${WIREUP_TEST_CLUSTER_DIR:-}}
[[ -n $DIR ]] || { echo "usage: $0 DIR (or set WIREUP_TEST_CLUSTER_DIR)" >&2; exit 2; }

env_lines=$("$HERE/cluster.sh" env "$DIR") || { echo "cluster.sh env failed" >&2; exit 1; }
eval "$env_lines"

# shellcheck source=../lib/assert.sh
source "$HERE/../lib/assert.sh"
# expect LABEL EXPECTED ACTUAL
expect() {
  if [[ $2 == "$3" ]]; then pass "$1"; else
    fail "$1: expected $(printf %q "$2"), actual $(printf %q "$3")"
  fi
}
words() { tr -s ' ' '\n' | sed '/^$/d' | sort "$@" | paste -sd' ' -; }

T=60 # seconds per client command
WORK=$WIREUP_TEST_CLUSTER/smoke
if ! { rm -rf "$WORK" && mkdir -p "$WORK"; }; then echo "cannot create $WORK" >&2; exit 1; fi

# --- 1. multi-node srun ------------------------------------------------------------
out=$(timeout $T srun -N2 -n4 hostname 2>"$WORK/srun1.err")
rc=$?
expect "srun -N2 -n4 hostname exits 0" 0 "$rc"
expect "srun -N2 -n4 hostname prints 4 lines" 4 "$(grep -c . <<<"$out")"
[[ -s $WORK/srun1.err ]] && sed 's/^/  srun stderr: /' "$WORK/srun1.err"

# --- 2. task ids, node names, marker in task environment ----------------------------
# shellcheck disable=SC2016 # expanded by the task, not here
out=$(timeout $T srun -N2 -n4 sh -c 'echo "$SLURM_PROCID $SLURMD_NODENAME $WIREUP_TEST_CLUSTER"')
rc=$?
expect "srun -N2 -n4 (task ids) exits 0" 0 "$rc"
expect "SLURM_PROCID values are 0..3, distinct" "0 1 2 3" "$(awk '{print $1}' <<<"$out" | words -n)"
nodes=$(awk '{print $2}' <<<"$out" | sort -u)
expect "tasks ran on 2 distinct nodes" 2 "$(grep -c . <<<"$nodes")"
case ${WIREUP_TEST_CLUSTER_NAMING:-hyperpod} in
  hyperpod) name_re='ip-127-0-0-[0-9]+' ;;
  hosts) name_re='node-[0-9]+' ;;
  nodeaddr) name_re='gpu[0-9][0-9]' ;;
  *) name_re='unknown naming style' ;;
esac
bad=$(grep -vxE "$name_re" <<<"$nodes")
expect "node names follow the ${WIREUP_TEST_CLUSTER_NAMING:-hyperpod} style ($name_re)" "" "$bad"
expect "tasks carry WIREUP_TEST_CLUSTER (teardown marker)" "$WIREUP_TEST_CLUSTER" \
  "$(awk '{print $3}' <<<"$out" | sort -u)"

# The i-th node's NodeAddr is 127.0.0.(i+1) (cluster.sh env lists both in order); with
# hyperpod names it is also the literal spelled by the name.
mapfile -t names < <(tr ',' '\n' <<<"$WIREUP_TEST_CLUSTER_NODES")
mapfile -t addrs < <(tr ',' '\n' <<<"$WIREUP_TEST_CLUSTER_ADDRS")
addr_bad=""
for i in "${!names[@]}"; do
  n=${names[i]}
  addr=$(timeout $T scontrol show node "$n" | grep -o 'NodeAddr=[^ ]*')
  want="NodeAddr=127.0.0.$((i + 2))"
  [[ $addr == "$want" && ${addrs[i]:-} == "${want#NodeAddr=}" ]] || addr_bad+="$n:$addr "
  ip=${want#NodeAddr=}
  [[ $WIREUP_TEST_CLUSTER_NAMING != hyperpod || $n == "ip-${ip//./-}" ]] || addr_bad+="$n:name "
done
expect "NodeAddr of the i-th node is 127.0.0.(i+1), as cluster.sh env says" "" "$addr_bad"

# What a task's name lookup sees: the hosts style resolves every node, the others none
# (hyperpod names are parsed, not looked up; nodeaddr names are known to Slurm only).
first=${names[0]} last_node=${names[-1]}
# shellcheck disable=SC2016
seen=$(timeout $T srun -N1 -n1 -w "$last_node" sh -c 'getent hosts "$0" "$1" | awk "{print \$1}" | paste -sd" " -' "$first" "$last_node")
if [[ $WIREUP_TEST_CLUSTER_NAMING == hosts ]]; then
  expect "a task on $last_node resolves $first and $last_node through the hosts file" "${addrs[0]} ${addrs[-1]}" "$seen"
  expect "the machine's /etc/hosts does not know $first" "" "$(getent hosts "$first")"
else
  expect "a task cannot resolve $first by name" "" "$seen"
fi

# --- 3. batch job -----------------------------------------------------------------
cat >"$WORK/job.sh" <<'EOF'
#!/bin/sh
echo "batch-ok $SLURM_JOB_ID $SLURM_JOB_NUM_NODES"
srun -N2 -n2 printenv SLURM_PROCID | sort -n | paste -sd' ' -
EOF
jid=$(timeout $T sbatch --parsable -N2 -n2 -o "$WORK/batch-%j.out" "$WORK/job.sh")
if [[ $jid =~ ^[0-9]+$ ]]; then
  pass "sbatch accepted job $jid"
  state=""
  for ((i = 0; i < 300; i++)); do # up to 60 s
    line=$(timeout $T scontrol -o show job "$jid" 2>/dev/null)
    state=$(grep -o 'JobState=[A-Z_]*' <<<"$line")
    state=${state#JobState=}
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED) break ;;
      "") # purged (MinJobAge) before we saw the final state: judge by the output
        state=PURGED
        break ;;
    esac
    sleep 0.2
  done
  [[ $state == PURGED ]] && echo "  (job record purged before its final state was seen)"
  [[ $state == PURGED ]] || expect "batch job $jid state" COMPLETED "$state"
  expect "batch job output" "batch-ok $jid 2
0 1" "$(cat "$WORK/batch-$jid.out" 2>/dev/null)"
else
  fail "sbatch returned '$jid'"
fi

# --- 4. PMIx ----------------------------------------------------------------------
# shellcheck disable=SC2016
out=$(timeout $T srun --mpi=pmix -N2 -n4 sh -c 'echo "$PMIX_RANK"' 2>"$WORK/pmix.err")
rc=$?
expect "srun --mpi=pmix -N2 -n4 exits 0" 0 "$rc"
expect "PMIX_RANK values are 0..3" "0 1 2 3" "$(words -n <<<"$out")"
[[ -s $WORK/pmix.err ]] && sed 's/^/  srun stderr: /' "$WORK/pmix.err"

# --- 5. nodes idle, none drained ----------------------------------------------------
states=""
for ((i = 0; i < 75; i++)); do # up to 15 s for completing nodes to settle
  states=$(timeout $T sinfo -h -N -o '%N %t' | sort -u)
  [[ -n $states ]] && ! grep -vq ' idle$' <<<"$states" && break
  sleep 0.2
done
expect "all nodes idle afterwards" "" "$(grep -v ' idle$' <<<"$states")"
expect "node count" "$(tr ',' '\n' <<<"$WIREUP_TEST_CLUSTER_NODES" | grep -c .)" "$(grep -c . <<<"$states")"

# --- 6. plugstack rewrite + restart-node (the tools other tests use) -----------------
last=${WIREUP_TEST_CLUSTER_NODES##*,}
cp "$WIREUP_TEST_CLUSTER/plugstack.conf" "$WORK/plugstack.orig"
mapfile -t orig_lines <"$WORK/plugstack.orig"
if "$HERE/cluster.sh" plugstack "$DIR" "${orig_lines[@]}" "# smoke: rewritten by smoke.sh"; then
  expect "plugstack rewrite keeps the old lines and adds one" \
    "$(cat "$WORK/plugstack.orig"; echo "# smoke: rewritten by smoke.sh")" \
    "$(cat "$WIREUP_TEST_CLUSTER/plugstack.conf")"
else
  fail "cluster.sh plugstack failed"
fi
if "$HERE/cluster.sh" restart-node "$DIR" "$last" 2>"$WORK/restart.err"; then
  pass "restart-node $last"
else
  fail "restart-node $last"
  sed 's/^/  /' "$WORK/restart.err" | tail -n 40
fi
out=$(timeout $T srun -N1 -w "$last" printenv SLURMD_NODENAME)
expect "srun on the restarted node" "$last" "$out"
# Put the original plugstack back (and make the node load it again).
if "$HERE/cluster.sh" plugstack "$DIR" "${orig_lines[@]}" &&
  cmp -s "$WORK/plugstack.orig" "$WIREUP_TEST_CLUSTER/plugstack.conf" &&
  "$HERE/cluster.sh" restart-node "$DIR" "$last" 2>>"$WORK/restart.err"; then
  pass "original plugstack restored"
else
  fail "original plugstack restored"
fi

((FAILS == 0)) || echo "smoke: logs in $WIREUP_TEST_CLUSTER/log" >&2
finish
