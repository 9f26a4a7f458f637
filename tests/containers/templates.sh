#!/usr/bin/env bash
# The templates' optional CONTAINER_IMAGE: prep-data, llama-fsdp (LAUNCHER=srun)
# and eval-export run their steps through pyxis (the stand-in) when it is set,
# and the container's tasks are wired by spank_wireup. The programs are small
# stand-ins in the image's /opt only (not on the node) that print what their
# task sees (the real ones are run by tests/templates); what is checked is the
# templates' routing. Each job is submitted with paths relative to a directory
# no mount holds and no CONTAINER_MOUNTS: the stand-in's record shows every step
# in the image, started in the image's /, each path of its command line under a
# mount that the template made (sbatch-templates/lib/container.sh).
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/containers/record.sh
source "$(dirname "$0")/record.sh"
TEMPLATES=$(cd "$(dirname "$0")/../../sbatch-templates" && pwd)
LOG=$WORK/pyxis.log
RECORD=$LOG order after
# A fake "wireup-train"/"wireup-prep" in the image: where it ran and the wiring it got.
BIN=$NODE/opt/wireup/bin
mkdir -p "$IMAGE/opt/wireup/bin" "$WORK/data" "$WORK/ckpt/step-00000010" "$WORK/logs" \
  "$WORK/hf-in" "$WORK/in" "$WORK/corpus" "$WORK/tok" "$WORK/submit"
cat >"$IMAGE/opt/wireup/bin/fake" <<'FAKE'
#!/bin/bash
echo "ran $(basename "$0") $1 rank=${RANK-unset} world=${WORLD_SIZE-unset} debug=${NCCL_DEBUG-unset} ld=${LD_LIBRARY_PATH-unset} cwd=$PWD ns=$(readlink /proc/self/ns/mnt)"
FAKE
chmod +x "$IMAGE/opt/wireup/bin/fake"
for p in wireup-train wireup-prep wireup-launch; do ln -s fake "$IMAGE/opt/wireup/bin/$p"; done
echo '{"vocab_size": 1000}' >"$WORK/data/manifest.json"
echo '{}' >"$WORK/ckpt/step-00000010/metadata.json"
echo '{}' >"$WORK/hf-in/config.json"
echo text >"$WORK/in/a.txt"
echo text >"$WORK/corpus/b.txt"
touch "$WORK/tok/tokenizer.model"
host_ns=$(readlink /proc/self/ns/mnt)
if [[ ! -e $BIN ]]; then pass "the image's programs are not on the node"; else fail "$BIN is on the node"; fi

# in_image NAME STEPS MOUNTS: the job $ID's record: these steps, each task in the
# image (another mount namespace, started in CWD (default /: no mount holds the
# submit directory), the image's program), every path on its command line under
# a mount (or the image's /opt), the mounts these; its output lists them.
in_image() {
  local tasks
  tasks=$(grep -c "^job=$ID " "$LOG" || true)
  check "$1: the steps in the image" "$(record_steps "$LOG" "$ID")" "$2"
  check "$1: each task in the image's namespace, in /, running the image's program" \
    "$(grep "^job=$ID " "$LOG" | grep -v " ns=$host_ns " | grep " image=$IMAGE " |
      grep -c " cwd=${CWD:-/} ns=.* argv=$BIN/wireup-")" "$tasks"
  check "$1: every path on the command lines under a mount" "$(record_unmounted "$LOG" "$ID" "$NODE/opt")" ""
  check "$1: the mounts" "$(record_mounts "$LOG" "$ID")" "$3"
  contains "$1: the mounts in the job's output" "$OUT" "container=$IMAGE mounts=$3"
}
own() { local d out=(); for d in "$@"; do out+=("$WORK/$d:$WORK/$d"); done; (IFS=,; echo "${out[*]}"); }
export WIREUP_BIN_DIR=$BIN CONTAINER_IMAGE=$IMAGE CONTAINER_MOUNTS=

run fsdp -N2 --ntasks-per-node=2 -t 5 --export=ALL,LAUNCHER=srun,DATA_DIR=../data,CKPT_DIR=../ckpt,LOG_DIR=../logs,INIT_FROM_HF=../hf-in,CHECKPOINT_FREQ=5 \
  "$TEMPLATES/llama-fsdp.sbatch"
in_image llama-fsdp "wireup-train=4 " "$(own ckpt data hf-in logs)"
check "llama-fsdp: 4 ranks in the container, wired, the image's NCCL_DEBUG and aws-ofi-nccl" \
  "$(grep '^ran wireup-train' <<<"$OUT" | grep -c "world=4 debug=WARN ld=/opt/amazon/ofi-nccl/lib:/usr/local/cuda/lib64 cwd=/ ns=")" 4
lacks "llama-fsdp: no rank in the node's mount namespace" "$OUT" "ns=$host_ns"
check "llama-fsdp: ranks 0-3" "$(grep -o '^ran wireup-train --preset rank=[0-9]' <<<"$OUT" | sort | tr -d '\n')" \
  "ran wireup-train --preset rank=0ran wireup-train --preset rank=1ran wireup-train --preset rank=2ran wireup-train --preset rank=3"
contains "llama-fsdp: absolute paths on the command line" "$OUT" "--dataset $WORK/data"

run prep -t 5 --export=ALL,INPUT="../in/a.txt ../corpus",TOKENIZER=../tok/tokenizer.model,DATA_DIR=../out/tokens \
  "$TEMPLATES/prep-data.sbatch"
in_image prep-data "wireup-prep=2 " "$(own corpus in out tok)"
# A data set that is there: only the verify step; CONTAINER_MOUNTS at its own path covers it.
mkdir -p "$WORK/out/tokens" && echo '{}' >"$WORK/out/tokens/manifest.json"
run verify -t 5 --export=ALL,DATA_DIR=../out/tokens,CONTAINER_MOUNTS="$WORK:$WORK" "$TEMPLATES/prep-data.sbatch"
CWD=$WORK/submit in_image "prep-data (verify, CONTAINER_MOUNTS=$WORK:$WORK)" "wireup-prep=1 " "$WORK:$WORK"

run eval -N1 --ntasks-per-node=1 -t 5 --export=ALL,DATA_DIR=../data,CKPT_DIR=../ckpt,LOG_DIR=../logs,HF_OUT=../exp/hf \
  "$TEMPLATES/eval-export.sbatch"
in_image eval-export "wireup-train eval=1 wireup-train export=1 " "$(own ckpt data exp logs)"

# A directory that --container-mounts cannot name: refused before any step.
run colon -t 5 --export=ALL,INPUT=../in/a.txt,VOCAB_SIZE=100,DATA_DIR=../a:b/tokens "$TEMPLATES/prep-data.sbatch"
contains "a path with ':': the template names it" "$OUT" \
  "prep-data: error: $WORK/a:b: a path with ',' or ':' cannot be a container mount"
check "a path with ':': no step ran" "$(grep -c "^job=$ID " "$LOG" || true)" 0

# The shared file: beside the template submitted, else under WIREUP_BIN_DIR/../share/wireup.
mkdir -p "$WORK/alone" "$WORK/prefix/bin" "$WORK/prefix/share/wireup/sbatch-templates/lib"
cp "$TEMPLATES/prep-data.sbatch" "$WORK/alone/"
if [[ ! -e /usr/local/share/wireup/sbatch-templates/lib/container.sh ]]; then
  run nolib -t 5 --export=ALL,INPUT=../in/a.txt,VOCAB_SIZE=100,DATA_DIR=../t "$WORK/alone/prep-data.sbatch"
  contains "a template without lib/container.sh: says what is missing" "$OUT" \
    "prep-data: error: no lib/container.sh beside this template or under $BIN/../share/wireup"
fi
cp "$TEMPLATES/lib/container.sh" "$WORK/prefix/share/wireup/sbatch-templates/lib/"
cp "$IMAGE/opt/wireup/bin/fake" "$WORK/prefix/bin/wireup-prep"
run installed -t 5 --export=ALL,WIREUP_BIN_DIR="$WORK/prefix/bin",CONTAINER_IMAGE=,INPUT=../in/a.txt,VOCAB_SIZE=100,DATA_DIR=../t \
  "$WORK/alone/prep-data.sbatch"
check "the installed lib/container.sh, bare: both steps, in the submit directory" \
  "$(grep -c "^ran wireup-prep .* cwd=$WORK/submit " <<<"$OUT")" 2
check "the installed lib/container.sh, bare: no step in a container" "$(grep -c "^job=$ID " "$LOG" || true)" 0

# A missing image: pyxis's own error ends the job; without pyxis the template says so.
run missing -t 5 --export=ALL,CONTAINER_IMAGE="$WORK/missing",INPUT=../in/a.txt,VOCAB_SIZE=100,DATA_DIR=../tokens2 \
  "$TEMPLATES/prep-data.sbatch"
contains "missing image: pyxis's error" "$OUT" "pyxis: image $WORK/missing: not found"
plugstack default=off
run nopyxis -t 5 --export=ALL,INPUT=../in/a.txt,VOCAB_SIZE=100,DATA_DIR=../tokens3 \
  "$TEMPLATES/prep-data.sbatch"
contains "no pyxis: the template says what is missing" "$OUT" \
  "prep-data: error: CONTAINER_IMAGE needs pyxis (srun --help lists no --container-image)"
nodes_idle
finish
