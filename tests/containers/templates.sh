#!/usr/bin/env bash
# The templates' optional CONTAINER_IMAGE: prep-data, llama-fsdp (LAUNCHER=srun)
# and eval-export run their steps through pyxis (the stand-in) when it is set,
# and the container's tasks are wired by spank_wireup. The programs are small
# stand-ins that print what their task sees (the real ones are run by
# tests/templates); what is checked is the templates' routing.
source "$(dirname "$0")/lib.sh"
TEMPLATES=$(cd "$(dirname "$0")/../../sbatch-templates" && pwd)
order after
# A fake "wireup-train"/"wireup-prep": where it ran and the wiring it got.
mkdir -p "$WORK/bin" "$WORK/data" "$WORK/ckpt/step-00000010" "$WORK/logs"
cat >"$WORK/bin/fake" <<'FAKE'
#!/bin/bash
echo "ran $(basename "$0") $1 rank=${RANK-unset} world=${WORLD_SIZE-unset} debug=${NCCL_DEBUG-unset} ld=${LD_LIBRARY_PATH-unset} ns=$(readlink /proc/self/ns/mnt)"
FAKE
chmod +x "$WORK/bin/fake"
for p in wireup-train wireup-prep wireup-launch; do ln -s fake "$WORK/bin/$p"; done
echo '{"vocab_size": 1000}' >"$WORK/data/manifest.json"
echo '{}' >"$WORK/ckpt/step-00000010/metadata.json"
host_ns=$(readlink /proc/self/ns/mnt)

# run NAME SBATCH_ARGS... TEMPLATE: submits, waits for the end, output in $OUT.
run() {
  local name=$1 id state
  shift
  id=$(sbatch --parsable -o "$WORK/$name.out" "$@")
  id=${id%%;*}
  for _ in $(seq 600); do
    state=$(scontrol -o show job "$id" 2>/dev/null | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p')
    [[ $state =~ ^(PENDING|CONFIGURING|RUNNING|COMPLETING|)$ ]] || break
    sleep 0.2
  done
  OUT=$(cat "$WORK/$name.out")
  echo "$OUT"
}
export WIREUP_BIN_DIR=$WORK/bin CONTAINER_IMAGE=$IMAGE CONTAINER_MOUNTS=$WORK:$WORK

run fsdp -N2 --ntasks-per-node=2 -t 5 --export=ALL,LAUNCHER=srun,DATA_DIR=$WORK/data,CKPT_DIR=$WORK/ckpt,LOG_DIR=$WORK/logs,CHECKPOINT_FREQ=0 \
  "$TEMPLATES/llama-fsdp.sbatch"
contains "llama-fsdp: the step runs through pyxis" "$OUT" "--container-image=$IMAGE --container-mounts=$WORK:$WORK"
check "llama-fsdp: 4 ranks in the container, wired, the image's NCCL_DEBUG and aws-ofi-nccl" \
  "$(grep '^ran wireup-train' <<<"$OUT" | grep -c "world=4 debug=WARN ld=/opt/amazon/ofi-nccl/lib:/usr/local/cuda/lib64 ns=")" 4
lacks "llama-fsdp: no rank in the node's mount namespace" "$OUT" "ns=$host_ns"
check "llama-fsdp: ranks 0-3" "$(grep -o '^ran wireup-train --preset rank=[0-9]' <<<"$OUT" | sort | tr -d '\n')" \
  "ran wireup-train --preset rank=0ran wireup-train --preset rank=1ran wireup-train --preset rank=2ran wireup-train --preset rank=3"

run prep -t 5 --export=ALL,INPUT=$WORK/data/manifest.json,VOCAB_SIZE=100,DATA_DIR=$WORK/tokens \
  "$TEMPLATES/prep-data.sbatch"
contains "prep-data: reports the container" "$OUT" "container=$IMAGE"
check "prep-data: both steps in the container" "$(grep '^ran wireup-prep' <<<"$OUT" | grep -vc "ns=$host_ns")" 2

run eval -N1 --ntasks-per-node=1 -t 5 --export=ALL,DATA_DIR=$WORK/data,CKPT_DIR=$WORK/ckpt,LOG_DIR=$WORK/logs,HF_OUT=$WORK/hf \
  "$TEMPLATES/eval-export.sbatch"
check "eval-export: eval and export in the container, even on one rank" \
  "$(grep -E '^ran wireup-train (eval|export)' <<<"$OUT" | grep -vc "ns=$host_ns")" 2

# A missing image: pyxis's own error ends the job; without pyxis the template says so.
run missing -t 5 --export=ALL,CONTAINER_IMAGE=$WORK/missing,INPUT=$WORK/data/manifest.json,VOCAB_SIZE=100,DATA_DIR=$WORK/tokens2 \
  "$TEMPLATES/prep-data.sbatch"
contains "missing image: pyxis's error" "$OUT" "pyxis: image $WORK/missing: not found"
plugstack default=off
run nopyxis -t 5 --export=ALL,INPUT=$WORK/data/manifest.json,VOCAB_SIZE=100,DATA_DIR=$WORK/tokens3 \
  "$TEMPLATES/prep-data.sbatch"
contains "no pyxis: the template says what is missing" "$OUT" \
  "prep-data: error: CONTAINER_IMAGE needs pyxis (srun --help lists no --container-image)"
nodes_idle
finish
