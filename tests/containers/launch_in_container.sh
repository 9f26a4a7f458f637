#!/usr/bin/env bash
# llama-fsdp.sbatch's default launcher inside a container: CONTAINER_IMAGE with
# LAUNCHER=wireup-launch runs one wireup-launch agent per node in the image
# (srun --mpi=pmix --container-image, the pyxis stand-in; LAUNCH_MPI=none: srun
# --mpi=none), and the agents wire the ranks they spawn from PMIx (or Slurm's
# SLURM_* facts), not from what the container brought: enroot's
# PyTorch hook gives each agent task RANK=SLURM_PROCID, WORLD_SIZE=SLURM_NTASKS
# (the number of agents) and MASTER_PORT=61000+job%4536, and spank_wireup
# (--wireup, registered after pyxis) its own per-task values. The image's
# wireup-launch is the real one; its "wireup-train" prints what its rank got
# and runs a real gloo all_reduce (tests/clients/allreduce.py) across the 4
# ranks on 2 nodes, so a wrong world, rank or address fails the rendezvous.
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/containers/record.sh
source "$(dirname "$0")/record.sh"
: "${WIREUP_LAUNCH:?run through ctest}"
TEMPLATES=$(cd "$(dirname "$0")/../../sbatch-templates" && pwd)
LOG=$WORK/pyxis.log
RECORD=$LOG order after
BIN=$NODE/opt/wireup/bin
mkdir -p "$IMAGE/opt/wireup/bin" "$WORK/data" "$WORK/logs" "$WORK/submit"
ln -s "$WIREUP_LAUNCH" "$IMAGE/opt/wireup/bin/wireup-launch"
cat >"$IMAGE/opt/wireup/bin/wireup-train" <<TRAIN
#!/bin/bash
echo "rank \${RANK-unset} local=\${LOCAL_RANK-unset} world=\${WORLD_SIZE-unset} addr=\${MASTER_ADDR-unset} port=\${MASTER_PORT-unset} debug=\${NCCL_DEBUG-unset} ld=\${LD_LIBRARY_PATH-unset} ns=\$(readlink /proc/self/ns/mnt)"
exec /usr/bin/python3 "$CLIENT"
TRAIN
chmod +x "$IMAGE/opt/wireup/bin/wireup-train"
echo '{"vocab_size": 1000}' >"$WORK/data/manifest.json"
host_ns=$(readlink /proc/self/ns/mnt)
# The template's programs are the image's (WIREUP_BIN_DIR), not the build's.
unset WIREUP_LAUNCH WIREUP_TRAIN
export WIREUP_BIN_DIR=$BIN CONTAINER_IMAGE=$IMAGE CONTAINER_MOUNTS=

# job LAUNCH_MPI MPI: llama-fsdp.sbatch with LAUNCH_MPI, its agents started with
# srun --mpi=MPI; the checks below.
job() {
  local RANKS port addr hook_port
  run "job-$1" -N2 --ntasks-per-node=2 -t 5 \
    --export=ALL,DATA_DIR=../data,LOG_DIR=../logs,CHECKPOINT_FREQ=0,LAUNCH_MPI="$1" \
    "$TEMPLATES/llama-fsdp.sbatch"
  find "$WORK/logs/ranks-$ID" -type f | sort
  RANKS=$(find "$WORK/logs/ranks-$ID" -type f -exec cat {} + 2>/dev/null || true)

  check "$1: the job completes" "$STATE" COMPLETED
  contains "$1: the template's default launcher, the agents started with --mpi=$2" "$OUT" "launcher=wireup-launch mpi=$2 "
  check "$1: one agent per node, in the image" "$(record_steps "$LOG" "$ID")" "wireup-launch=2 "
  check "$1: each agent in the image's namespace, in /, running the image's wireup-launch" \
    "$(grep "^job=$ID " "$LOG" | grep -v " ns=$host_ns " | grep -c " image=$IMAGE .* cwd=/ ns=.* argv=$BIN/wireup-launch ")" 2
  check "$1: every path on the agents' command lines under a mount" "$(record_unmounted "$LOG" "$ID" "$NODE/opt")" ""
  check "$1: the mounts" "$(record_mounts "$LOG" "$ID")" "$WORK/data:$WORK/data,$WORK/logs:$WORK/logs"

  # What the 4 ranks got: wireup-launch's world, not the hook's or the agent task's.
  # One MASTER_ADDR, an IPv4 literal (PMIx: rank 0's agent's choice, the address of its
  # node as PMIx names it, else its first interface; none: spank_wireup's, the first
  # node's), never the hook's host name.
  port=$(sed -n 's/^rank 0 .* port=\([0-9]*\) .*/\1/p' <<<"$RANKS")
  addr=$(sed -n 's/^rank 0 .* addr=\([0-9.]*\) .*/\1/p' <<<"$RANKS")
  hook_port=$((ID % 4536 + 61000))
  check "$1: 4 ranks, world 4, one IPv4 address ($addr) and port, the image's NCCL_DEBUG and aws-ofi-nccl" \
    "$(grep -c "^rank [0-3] local=[01] world=4 addr=$addr port=$port debug=WARN ld=/opt/amazon/ofi-nccl/lib:/usr/local/cuda/lib64 ns=" <<<"$RANKS")" 4
  check "$1: ranks 0-3, two per node" "$(grep -o '^rank [0-9] local=[0-9]' <<<"$RANKS" | sort | tr '\n' ' ')" \
    "rank 0 local=0 rank 1 local=1 rank 2 local=0 rank 3 local=1 "
  [[ -n $port && $port != "$hook_port" ]] && pass "$1: MASTER_PORT $port is wireup-launch's, not the hook's $hook_port" ||
    fail "$1: MASTER_PORT '$port' (the hook's: $hook_port)"
  lacks "$1: no rank in the node's mount namespace" "$RANKS" "ns=$host_ns"
  check "$1: the 4 ranks' gloo all_reduce" "$(grep -c '^allreduce ok rank=[0-3] world=4 sum=10 ' <<<"$RANKS")" 4
}

# Through PMIx (auto: the test cluster's Slurm has the plugin), and without it (the
# agents wired from Slurm's SLURM_* facts, as on HyperPod clusters without PMIx).
job auto pmix
job none none
nodes_idle
finish
