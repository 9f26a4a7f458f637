#!/usr/bin/env bash
# wireup listed before the container plugin (an admin's hand edit): pyxis's
# task_init then imports the image's environment over wireup's values.
# --wireup-verbose and wireup-env say so, naming the plugin, what it
# overrides and the fix; wireup's rendezvous values survive where neither the
# image nor the hook defines them; a failing container plugin's own error
# reaches the user and no node drains.
source "$(dirname "$0")/lib.sh"
order before
node0=${ADDRS[0]}

err=$(timeout 60 srun -N1 -n1 --wireup-verbose --container-image="$IMAGE" true 2>&1 >/dev/null)
echo "$err"
contains "verbose: warns about the order, names pyxis" "$err" \
  "wireup[0]: # warning: $CLUSTER/plugstack.conf loads spank_wireup.so (line 1) before the container plugin pyxis (line 2: required $WIREUP_PYXIS_STANDIN"
contains "verbose: says what pyxis overrides" "$err" "imports the image's environment over what wireup set"
contains "verbose: gives the fix" "$err" "Fix: list spank_wireup.so after pyxis"
contains "verbose: the node's root was read" "$err" "# install trees read from the node's root ($NODE/opt, as slurmstepd sees it)"
dry_err=$(timeout 30 srun -N1 -n1 "$WIREUP_ENV_TOOL" --plugstack "$CLUSTER/plugstack.conf" 2>&1 >/dev/null)
contains "wireup-env warns too" "$dry_err" \
  "wireup-env: warning: $CLUSTER/plugstack.conf loads spank_wireup.so (line 1) before the container plugin pyxis"

# What the warning is about: the image's value replaces even an explicit option.
out=$(timeout 60 srun -N1 -n1 --wireup-nccl-debug=TRACE --container-image="$IMAGE" bash -c "$SHOW")
contains "pyxis replaced --wireup-nccl-debug (the reason for the warning)" "$out" "debug=WARN"

# Without the hook, the image defines no rendezvous variable: wireup's reach
# the task and a real PyTorch job runs on 1 and 2 nodes. The step is pinned to
# the first two nodes: a node still completing the last job is otherwise skipped.
HOOK=off order before
out=$(timeout 60 srun -N2 -n2 -w "${NODES[0]},${NODES[1]}" --wireup --container-image="$IMAGE" bash -c "$SHOW" | sort)
contains "no hook: wireup's MASTER_ADDR" "$out" "rank=1 local=0 world=2 addr=$node0 "
for shape in "-N1 -n2" "-N2 -n4"; do
  # shellcheck disable=SC2086  # the shape is two options
  out=$(timeout 180 srun $shape --wireup --container-image="$IMAGE" /usr/bin/python3 "$CLIENT")
  n=${shape##*-n}
  check "torch env:// with wireup before pyxis, no hook ($shape)" \
    "$(grep -c "^allreduce ok rank=[0-9] world=$n " <<<"$out")" "$n"
done

# A missing image: the container plugin's own error, nothing from wireup over it,
# in both orders; no node drains.
for which in before after; do
  order "$which"
  set +e
  msg=$(timeout 60 srun -N2 -n2 --wireup --container-image="$WORK/missing" true 2>&1); rc=$?
  set -e
  echo "$msg"
  ((rc != 0)) && pass "$which: missing image fails the job" || fail "$which: missing image ran"
  contains "$which: the container plugin's error" "$msg" "pyxis: image $WORK/missing: not found"
  lacks "$which: no wireup message" "$msg" "wireup: "
  lacks "$which: no spank_wireup error" "$msg" "spank_wireup"
  nodes_idle
done
finish
