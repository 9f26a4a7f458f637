#!/usr/bin/env bash
# EFA decisions on a real cluster with fake sysfs/DMI trees (this machine has
# no EFA). Debian's libfabric has no efa provider, so the real probe says so
# and FI_PROVIDER must stay unset; the rest follows the instance type.
source "$(dirname "$0")/lib.sh"

fake_node() {  # DIR INSTANCE_TYPE
  mkdir -p "$1/sys/devices/virtual/dmi/id" "$1/sys/class/infiniband/rdmap0s31/device" \
    "$1/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu"
  echo "$2" >"$1/sys/devices/virtual/dmi/id/product_name"
  ln -sfn ../../../../bus/pci/drivers/efa "$1/sys/class/infiniband/rdmap0s31/device/driver"
  touch "$1/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so"
}
# DIR INSTANCE_TYPE LIBRARY VERSION: an aws-ofi-nccl install of one release, its version
# string embedded in the library as a real build embeds it (no tuner of its own).
fake_release() {
  mkdir -p "$1/sys/devices/virtual/dmi/id" "$1/sys/class/infiniband/rdmap0s31/device" \
    "$(dirname "$1/$3")"
  echo "$2" >"$1/sys/devices/virtual/dmi/id/product_name"
  ln -sfn ../../../../bus/pci/drivers/efa "$1/sys/class/infiniband/rdmap0s31/device/driver"
  { head -c 4096 /dev/zero; printf 'aws-ofi-nccl %s\0' "$4"; head -c 4096 /dev/zero; } >"$1/$3"
}
fake_node "$WORK/p5" p5.48xlarge
fake_node "$WORK/g5" g5.48xlarge
fake_release "$WORK/new" p5en.48xlarge opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so 1.16.2
fake_release "$WORK/old" p4d.24xlarge opt/amazon/ofi-nccl/lib/libnccl-net.so 1.5.0
trap 'plugstack default=off; rm -rf "$WORK"' EXIT
show='echo "prov=${FI_PROVIDER-unset} rdma=${FI_EFA_USE_DEVICE_RDMA-unset} tuner=${NCCL_TUNER_PLUGIN-unset} shm=${NCCL_SHM_USE_CUDA_MEMCPY-unset} ld=${LD_LIBRARY_PATH-unset}"'

plugstack default=off "sysroot=$WORK/p5"
out=$(timeout 30 srun -N2 -n2 --wireup bash -c "$show" | sort -u)
echo "$out"
check "p5: RDMA on, tuner, no FI_PROVIDER without the efa provider" "$out" \
  "prov=unset rdma=1 tuner=/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so shm=unset ld=/opt/amazon/ofi-nccl/lib"
out=$(FI_EFA_USE_DEVICE_RDMA=0 timeout 30 srun -N1 -n1 --wireup bash -c "$show")
contains "user's FI_EFA_USE_DEVICE_RDMA=0 kept" "$out" "rdma=0"
out=$(timeout 30 srun -N1 -n1 --wireup-efa=off bash -c "$show")
contains "--wireup-efa=off: no EFA variables" "$out" "prov=unset rdma=unset tuner=unset"

plugstack default=off "sysroot=$WORK/g5"
out=$(timeout 30 srun -N1 -n1 --wireup bash -c "$show")
check "g5: never FI_EFA_USE_DEVICE_RDMA" "$out" \
  "prov=unset rdma=unset tuner=/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so shm=1 ld=/opt/amazon/ofi-nccl/lib"

# The installed aws-ofi-nccl's release decides, with the libfabric the plugin loads:
# below 1.18 device RDMA stays on for GPUDirect types even with a new plugin; from
# 1.18 (trixie's 2.1) the plugin uses RDMA read by itself and it is not set.
lf=$(/usr/bin/python3 -c 'import ctypes; v = ctypes.CDLL("libfabric.so.1").fi_version(); print(v >> 16, v & 0xffff)')
read -r lf_major lf_minor <<<"$lf"
if ((lf_major > 1 || lf_minor >= 18)); then rdma="unset"; else rdma="1"; fi
# shellcheck disable=SC2016  # expanded by the task's shell
release='echo "net=${NCCL_NET_PLUGIN-unset} prov=${FI_PROVIDER-unset} proto=${NCCL_PROTO-unset} fork=${FI_EFA_FORK_SAFE-unset} rdma=${FI_EFA_USE_DEVICE_RDMA-unset} tuner=${NCCL_TUNER_PLUGIN-unset} ld=${LD_LIBRARY_PATH-unset}"'
plugstack default=off "sysroot=$WORK/new"
out=$(timeout 30 srun -N2 -n2 --wireup bash -c "$release" | sort -u)
check "aws-ofi-nccl 1.16 on p5en: NCCL_NET_PLUGIN=ofi, no fork/provider/tuner variables" "$out" \
  "net=ofi prov=unset proto=unset fork=unset rdma=$rdma tuner=unset ld=/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu"
err=$(timeout 30 srun -N1 -n1 --wireup-verbose true 2>&1 >/dev/null)
contains "verbose: the version read from the library" "$err" "FI_EFA_FORK_SAFE not set: aws-ofi-nccl 1.16.2 sets it itself"
if [[ $rdma == 1 ]]; then
  contains "verbose: why device RDMA is still set" "$err" \
    "p5en.48xlarge supports GPUDirect RDMA read; aws-ofi-nccl 1.16.2, libfabric $lf_major.$lf_minor"
else
  contains "verbose: why device RDMA is not set" "$err" \
    "FI_EFA_USE_DEVICE_RDMA not set: aws-ofi-nccl 1.16.2 with libfabric $lf_major.$lf_minor uses RDMA read by default"
fi
plugstack default=off "sysroot=$WORK/old"
out=$(timeout 30 srun -N1 -n1 --wireup bash -c "$release")
check "aws-ofi-nccl 1.5 on p4d: the old rules (no FI_PROVIDER: this libfabric lacks efa)" "$out" \
  "net=unset prov=unset proto=simple fork=1 rdma=1 tuner=unset ld=/opt/amazon/ofi-nccl/lib"
dry=$(timeout 30 srun -N1 -n1 "$WIREUP_ENV_TOOL" --admin default=off "sysroot=$WORK/new")
contains "dry run agrees: NCCL_NET_PLUGIN" "$dry" "NCCL_NET_PLUGIN=ofi  (set: /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so installed)"

# --wireup-efa=on where libfabric cannot do EFA: the job fails, the node does not.
set +e
msg=$(timeout 30 srun -N1 -n1 --wireup-efa=on true 2>&1); rc=$?
set -e
((rc != 0)) && pass "efa=on without a usable EFA fails the job" || fail "efa=on ran anyway"
contains "says why" "$msg" "no efa provider"
nodes_idle

# The real node (no EFA at all): nothing EFA, not even with a tuner installed.
plugstack default=off
out=$(timeout 30 srun -N1 -n1 --wireup bash -c "$show")
contains "real no-EFA node" "$out" "prov=unset rdma=unset tuner=unset shm=unset"
finish
