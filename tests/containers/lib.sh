# shellcheck shell=bash
# Helpers for spank_wireup beside the pyxis stand-in (sourced, not run). CTest
# provides WIREUP_PYXIS_STANDIN (tests/containers/pyxis_standin.cpp) besides
# what tests/spank/lib.sh needs.
# shellcheck source=../spank/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../spank/lib.sh"
: "${WIREUP_PYXIS_STANDIN:?run through ctest}"
# shellcheck disable=SC2034  # used by the scripts that source this
CLIENT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clients" && pwd)/allreduce.py

# An aws-ofi-nccl library file whose embedded version a real build would carry.
ofi_library() { # FILE VERSION
  mkdir -p "$(dirname "$1")"
  { head -c 4096 /dev/zero; printf 'aws-ofi-nccl %s\0' "$2"; head -c 4096 /dev/zero; } >"$1"
}

# The node: a p5en.48xlarge with one EFA device and aws-ofi-nccl 1.16.2 on the
# host (wireup's sysroot=NODE; the stand-in replaces NODE/opt in the task).
NODE=$WORK/node
mkdir -p "$NODE/sys/devices/virtual/dmi/id" "$NODE/sys/class/infiniband/rdmap0s31/device"
echo p5en.48xlarge >"$NODE/sys/devices/virtual/dmi/id/product_name"
ln -sfn ../../../../bus/pci/drivers/efa "$NODE/sys/class/infiniband/rdmap0s31/device/driver"
ofi_library "$NODE/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so" 1.16.2

# An image with PyTorch, its own environment and its own aws-ofi-nccl 1.14.0
# (libnccl-net.so and a separate tuner in lib/), as the AWS NCCL test images.
IMAGE=$WORK/image
mkdir -p "$IMAGE"
printf '%s\n' PYTORCH_VERSION=2.1.0 NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=eth9 \
  LD_LIBRARY_PATH=/usr/local/cuda/lib64 "LANG=C.UTF-8" >"$IMAGE/environment"
ofi_library "$IMAGE/opt/amazon/ofi-nccl/lib/libnccl-net.so" 1.14.0
touch "$IMAGE/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so"
# An image with PyTorch and no aws-ofi-nccl, nothing under /opt.
BARE=$WORK/bare
mkdir -p "$BARE"
echo PYTORCH_VERSION=2.1.0 >"$BARE/environment"

# plugstack.conf in one of the two orders: `after` lists wireup after pyxis.
# HOOK=off leaves out enroot's PyTorch hook; RECORD=FILE: the stand-in's record
# of each task (tests/containers/record.sh reads it).
order() { # after|before [WIREUP_ARGS...]
  local which=$1 pyxis wireup
  shift
  pyxis="required $WIREUP_PYXIS_STANDIN opt_root=$NODE pytorch_hook=${HOOK:-on}${RECORD:+ record=$RECORD}"
  wireup="optional $WIREUP_PLUGIN default=off sysroot=$NODE $*"
  if [[ $which == after ]]; then
    bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$CLUSTER" "$pyxis" "$wireup"
  else
    bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$CLUSTER" "$wireup" "$pyxis"
  fi
}
trap 'plugstack default=off; rm -rf "$WORK"' EXIT

# run NAME SBATCH_ARGS... TEMPLATE: submits from $WORK/submit, waits for the end,
# output in $OUT (also printed), job id in $ID, its final state in $STATE.
run() {
  local name=$1
  shift
  ID=$(cd "$WORK/submit" && sbatch --parsable -o "$WORK/$name.out" "$@")
  ID=${ID%%;*}
  for _ in $(seq 600); do
    STATE=$(scontrol -o show job "$ID" 2>/dev/null | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p')
    [[ $STATE =~ ^(PENDING|CONFIGURING|RUNNING|COMPLETING|)$ ]] || break
    sleep 0.2
  done
  OUT=$(cat "$WORK/$name.out")
  echo "$OUT"
}

# What a task has, one line per task.
# shellcheck disable=SC2034,SC2016  # used by the scripts; expanded by the task's shell
SHOW='echo "rank=${RANK-} local=${LOCAL_RANK-} world=${WORLD_SIZE-} addr=${MASTER_ADDR-} port=${MASTER_PORT-} debug=${NCCL_DEBUG-unset} ifname=${NCCL_SOCKET_IFNAME-unset} net=${NCCL_NET_PLUGIN-unset} tuner=${NCCL_TUNER_PLUGIN-unset} fork=${FI_EFA_FORK_SAFE-unset} ld=${LD_LIBRARY_PATH-unset}"'
