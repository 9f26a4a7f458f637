#!/bin/bash
# interactive.sh: an interactive allocation for development and debugging.
# salloc takes NODES nodes with --wireup, so every srun inside is wired (RANK,
# WORLD_SIZE, MASTER_ADDR/PORT, EFA/NCCL settings); it prints what each node
# got, then opens a shell in the allocation (or runs CMD) and releases the nodes
# when that ends.
#
#   interactive.sh                    # a shell with the allocation; `exit` releases it
#   interactive.sh -- CMD [ARGS...]   # run CMD in the allocation instead, then release
#
# In the shell, for example:
#   srun wireup-train --preset tiny --synthetic_data --max_steps 20   # every rank, wired
#   srun python train.py              # torch init_method="env://" just works
#   srun --wireup-verbose -n1 true    # what a task gets from wireup, and why
#   srun -N1 -n1 --pty bash           # a shell on the first compute node (nvidia-smi, ...)
#
# What to edit (or set in the environment):
#   NODES           nodes (default 2)
#   RANKS_PER_NODE  tasks per node = GPUs per node (default 8)
#   TIME            time limit (default 01:00:00)
#   SALLOC_ARGS     more salloc options (-p PARTITION, -w NODES, --exclusive, ...)
#   WIREUP_BIN_DIR  put first on PATH in the shell (default /usr/local/bin)
#
# What it needs: spank_wireup in plugstack.conf (the lifecycle install).
#
# On CPU (the local test cluster, docs/templates.md), for example:
#   NODES=2 RANKS_PER_NODE=2 TIME=5 interactive.sh -- srun hostname
set -euo pipefail

NODES=${NODES:-2}
RANKS_PER_NODE=${RANKS_PER_NODE:-8}
TIME=${TIME:-01:00:00}
SALLOC_ARGS=${SALLOC_ARGS:-}
WIREUP_BIN_DIR=${WIREUP_BIN_DIR:-/usr/local/bin}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
  exit 0
fi
[[ ${1:-} == -- ]] && shift
if [[ $(srun --help 2>&1) != *--wireup* ]]; then
  echo "interactive.sh: srun --help lists no --wireup: register spank_wireup in plugstack.conf" >&2
  exit 2
fi
if (($#)); then cmd=("$@"); else cmd=(bash -i); fi

read -r -a extra <<<"$SALLOC_ARGS"
# Runs inside the allocation: one line per node, then CMD (or the shell).
# shellcheck disable=SC2016  # expanded by the inner shells
inner='
export PATH="$WIREUP_BIN_DIR:$PATH"
echo "[alloc] job=$SLURM_JOB_ID nodes=$SLURM_JOB_NUM_NODES ($SLURM_JOB_NODELIST) tasks=$SLURM_NTASKS; every srun here is wired (--wireup)"
n=$SLURM_JOB_NUM_NODES
srun --nodes="$n" --ntasks="$n" --ntasks-per-node=1 bash -c '\''
  gpus=$(find /dev -maxdepth 1 -name "nvidia[0-9]*" | wc -l)
  echo "[node] $SLURMD_NODENAME node_rank=$NODE_RANK gpus=$gpus master=$MASTER_ADDR:$MASTER_PORT${FI_PROVIDER:+ FI_PROVIDER=$FI_PROVIDER}"'\'' | sort
exec "$@"'
export WIREUP_BIN_DIR
exec salloc --nodes="$NODES" --ntasks-per-node="$RANKS_PER_NODE" --time="$TIME" --wireup \
  --job-name=interactive "${extra[@]}" bash -c "$inner" interactive "${cmd[@]}"
