#!/usr/bin/env bash
# wireup listed after the container plugin (what lifecycle/on_create.sh
# writes): its task_init runs inside the container, plans from the
# container's aws-ofi-nccl, keeps the image's NCCL_*/FI_* values, replaces the
# hook's rendezvous values with its own and names every value's source.
source "$(dirname "$0")/lib.sh"
order after
node0=${ADDRS[0]}

out=$(timeout 60 srun -N1 -n2 -w "${NODES[0]}" --wireup --container-image="$IMAGE" bash -c "$SHOW" | sort)
echo "$out"
port=$(field "$(head -n1 <<<"$out")" port)
job_port=$(timeout 30 srun -N1 -n1 -w "${NODES[0]}" bash -c 'echo $((SLURM_JOB_ID % 4536 + 61000))')
check "container: the image's aws-ofi-nccl 1.14 decides, the image's NCCL values stay" "$out" \
  "rank=0 local=0 world=2 addr=$node0 port=$port debug=WARN ifname=eth9 net=unset tuner=/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so fork=unset ld=/opt/amazon/ofi-nccl/lib:/usr/local/cuda/lib64
rank=1 local=1 world=2 addr=$node0 port=$port debug=WARN ifname=eth9 net=unset tuner=/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so fork=unset ld=/opt/amazon/ofi-nccl/lib:/usr/local/cuda/lib64"
[[ $port != "$job_port" ]] && pass "MASTER_PORT is wireup's per-step port, not the hook's" ||
  fail "MASTER_PORT is the hook's per-job port $port"

order after nccl_debug=INFO
err=$(timeout 60 srun -N1 -n1 -w "${NODES[0]}" --wireup-verbose --container-image="$IMAGE" true 2>&1 >/dev/null)
echo "$err"
order after
contains "verbose: the root read" "$err" "wireup[0]: # install trees read from the task's root ($NODE/opt inside the container"
contains "verbose: the container's release" "$err" "aws-ofi-nccl 1.14.0"
contains "verbose: image value kept, source named" "$err" \
  "wireup[0]: NCCL_DEBUG=WARN  (kept image value: set by the container image or hook) [image or hook]"
contains "verbose: hook's MASTER_ADDR replaced" "$err" \
  "wireup[0]: MASTER_ADDR=$node0  (set: first node of the step"
contains "verbose: names what it replaced" "$err" "; replaces '${NODES[0]}' from the container image or hook) [wireup]"
contains "verbose: the same value from pyxis is not called replaced" "$err" \
  "wireup[0]: RANK=0  (unchanged: global task id (the container image or hook set the same value)) [wireup]"
contains "verbose: prepended to the image's path" "$err" \
  "LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/usr/local/cuda/lib64  (set: aws-ofi-nccl / EFA libraries installed) [wireup + image or hook]"
lacks "verbose: no order warning" "$err" "before the container plugin"

# An image without aws-ofi-nccl: no library directory, no plugin named.
out=$(timeout 60 srun -N1 -n1 --wireup --container-image="$BARE" bash -c "$SHOW")
contains "bare image: nothing that is not in the task's root" "$out" \
  "net=unset tuner=unset fork=1 ld=unset"

# Users and admins still win where they said so.
out=$(timeout 60 srun -N1 -n1 --wireup-nccl-debug=TRACE --container-image="$IMAGE" bash -c "$SHOW")
contains "--wireup-nccl-debug beats the image" "$out" "debug=TRACE"
out=$(NCCL_DEBUG=INFO MASTER_PORT=777 timeout 60 srun -N1 -n1 --wireup --container-image="$IMAGE" \
  --container-env=NCCL_DEBUG,MASTER_PORT bash -c "$SHOW")
contains "--container-env keeps the user's values" "$out" "port=777 debug=INFO"
out=$(NCCL_DEBUG=INFO timeout 60 srun -N1 -n1 --wireup --container-image="$IMAGE" bash -c "$SHOW")
contains "without --container-env the image's NCCL_DEBUG replaced the user's (pyxis)" "$out" "debug=WARN"
order after forceenv=NCCL_SOCKET_IFNAME=lo
err=$(timeout 60 srun -N1 -n1 --wireup-verbose --container-image="$IMAGE" true 2>&1 >/dev/null)
contains "admin forceenv beats the image" "$err" \
  "NCCL_SOCKET_IFNAME=lo  (set: plugstack.conf forceenv; replaces 'eth9' from the container image or hook) [admin]"
order after

# wireup-env inside the wired container task reads the container's root and
# prints the plan the plugin applied.
pick='echo "addr=$MASTER_ADDR port=$MASTER_PORT tuner=${NCCL_TUNER_PLUGIN-unset} ld=$LD_LIBRARY_PATH"'
out=$(timeout 60 srun -N1 -n1 --wireup --container-image="$IMAGE" bash -c \
  "$pick; eval \"\$('$WIREUP_ENV_TOOL' --plugstack '$CLUSTER/plugstack.conf' --export)\"; $pick")
check "wireup-env in the container agrees with the plugin" "$(sed -n 2p <<<"$out")" "$(head -n1 <<<"$out")"
dry=$(timeout 60 srun -N1 -n1 --wireup --container-image="$IMAGE" "$WIREUP_ENV_TOOL" --plugstack "$CLUSTER/plugstack.conf")
contains "wireup-env names the root it read" "$dry" "# install trees read from this process's root ($NODE/opt"
contains "wireup-env reads the container's aws-ofi-nccl" "$dry" "aws-ofi-nccl 1.14.0"
# With the admin's NCCL_DEBUG default, both say the image's value was kept.
order after nccl_debug=INFO
both=$(timeout 60 srun -N1 -n1 --wireup-verbose --container-image="$IMAGE" "$WIREUP_ENV_TOOL" \
  --plugstack "$CLUSTER/plugstack.conf" 2>&1)
check "plugin and wireup-env: the same NCCL_DEBUG line" \
  "$(grep -c "NCCL_DEBUG=WARN  (kept image value: set by the container image or hook) \[image or hook\]" <<<"$both")" 2
contains "the plugin records the image's names" "$both" "WIREUP_IMAGE_VARS=NCCL_DEBUG  (set:"
order after

# Without a container the same plugstack plans from the node's own tree.
out=$(timeout 30 srun -N1 -n1 --wireup bash -c "$SHOW")
contains "no container: the host's aws-ofi-nccl 1.16.2" "$out" \
  "net=ofi tuner=unset fork=unset ld=/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu"

# A real PyTorch job (gloo, env://) inside the container, 1 and 2 nodes.
for shape in "-N1 -n2" "-N2 -n4"; do
  # shellcheck disable=SC2086  # the shape is two options
  out=$(timeout 180 srun $shape --wireup --container-image="$IMAGE" /usr/bin/python3 "$CLIENT")
  echo "$out"
  n=${shape##*-n}
  check "torch env:// in the container ($shape)" "$(grep -c "^allreduce ok rank=[0-9] world=$n " <<<"$out")" "$n"
done
nodes_idle
finish
