#!/usr/bin/env bash
# sft-llama3.sbatch with CONTAINER_IMAGE under the pyxis stand-in, on the test
# cluster with the real programs (tests/templates/sft_fixture.sh: Llama 3's
# tokenizer, the SFT facts, a tiny Hugging Face checkpoint), 2 nodes, a short run
# (MAX_STEPS=30). The same job runs bare, then in the image, whose wireup lives
# under the image's /opt only (not on the node); the container run is submitted
# with relative paths from a directory no mount holds. What the stand-in recorded
# per task (record=, tests/containers/pyxis_standin.cpp) shows every step of the
# job in the image, each path of its command line under a mount, and the
# working directory the image's; the outcome (eval loss, exported weights,
# answers) is the bare run's, byte for byte.
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/templates/sft_fixture.sh
source "$(dirname "$0")/sft_fixture.sh"
# shellcheck source=tests/containers/record.sh
source "$(dirname "$0")/../containers/record.sh"
: "${WIREUP_PYXIS_STANDIN:?set by ctest}"
restore() { bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$WIREUP_TEST_CLUSTER_DIR" "optional $WIREUP_PLUGIN default=off"; }
trap 'restore; cleanup' EXIT

# The image: its environment (NGC-like: PYTORCH_VERSION, the hook's variables) and
# wireup under its /opt, mounted over NODE/opt in each task's mount namespace.
NODE=$WORK/node IMAGE=$WORK/image BIN=$WORK/node/opt/wireup/bin
mkdir -p "$NODE/opt" "$IMAGE/opt/wireup/bin"
for p in wireup-train wireup-prep; do ln -s "$(readlink "$WORK/bin/$p")" "$IMAGE/opt/wireup/bin/$p"; done
printf '%s\n' PYTORCH_VERSION=2.6.0 NCCL_DEBUG=WARN LANG=C.UTF-8 >"$IMAGE/environment"
expect "the image's wireup is not on the node" test ! -e "$BIN"
bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$WIREUP_TEST_CLUSTER_DIR" \
  "required $WIREUP_PYXIS_STANDIN opt_root=$NODE pytorch_hook=on record=$WORK/pyxis.log" \
  "optional $WIREUP_PLUGIN default=off"

# The bare run, absolute paths.
t0=$SECONDS
rc=$(export "${SFT_SETTINGS[@]}"
  INPUT=$WORK/chats.jsonl INIT_FROM_HF=$WORK/hf-in TOKENIZER=$tok DATA_DIR=$WORK/bare/data \
  CKPT_DIR=$WORK/bare/ckpt LOG_DIR=$WORK/bare/logs HF_OUT=$WORK/bare/hf-out PROMPTS=$WORK/ask.jsonl \
  MAX_STEPS=30 CHECKPOINT_FREQ=30 \
  run_job bare 200 -N 2 --ntasks-per-node=1 -t 5 "$TEMPLATES/sft-llama3.sbatch")
check "bare run ($((SECONDS - t0)) s)" "$rc" 0
[[ $rc == 0 ]] || show bare

# The container run: the inputs in a directory of their own, paths relative to the
# submit directory, which no mount holds.
mkdir -p "$WORK/in" "$WORK/submit"
cp "$WORK/chats.jsonl" "$WORK/ask.jsonl" "$WORK/in/"
t0=$SECONDS
rc=$(cd "$WORK/submit" && export "${SFT_SETTINGS[@]}"
  CONTAINER_IMAGE=$IMAGE WIREUP_BIN_DIR=$BIN \
  INPUT=../in/chats.jsonl INIT_FROM_HF=../hf-in TOKENIZER=$tok DATA_DIR=../ctr/data \
  CKPT_DIR=../ctr/ckpt LOG_DIR=../ctr/logs HF_OUT=../ctr/hf-out PROMPTS=../in/ask.jsonl \
  MAX_STEPS=30 CHECKPOINT_FREQ=30 \
  run_job ctr 200 -N 2 --ntasks-per-node=1 -t 5 "$TEMPLATES/sft-llama3.sbatch")
check "container run ($((SECONDS - t0)) s)" "$rc" 0
[[ $rc == 0 ]] || show ctr

# The stand-in's record: one line per task of each step.
bare_id=$(cat "$WORK/bare.id") ctr_id=$(cat "$WORK/ctr.id")
log=$WORK/pyxis.log
touch "$log"
check "the bare run: no task in a container" "$(grep -c "^job=$bare_id " "$log")" 0
check "every step in the image: prep, train and eval on 2 ranks, export, generate" \
  "$(record_steps "$log" "$ctr_id")" \
  "wireup-prep=1 wireup-train=2 wireup-train eval=2 wireup-train export=1 wireup-train generate=1 "
host_ns=$(readlink /proc/self/ns/mnt)
check "each task: the image, another mount namespace, the image's working directory" \
  "$(grep "^job=$ctr_id " "$log" | grep -v " ns=$host_ns " | grep -c " image=$IMAGE .* cwd=/ ns=")" 7
check "each program: the image's" "$(grep "^job=$ctr_id " "$log" | grep -c " argv=$BIN/wireup-")" 7
# Every absolute path of every command line under a mount's destination (or the image's /opt).
check "every path a step is given is mounted at its own path" \
  "$(record_unmounted "$log" "$ctr_id" "$NODE/opt")" ""
check "the mounts: the directories the steps use, none twice" "$(record_mounts "$log" "$ctr_id")" \
  "$(printf '%s\n' "$WORK/ctr:$WORK/ctr" "$WORK/hf-in:$WORK/hf-in" "$WORK/in:$WORK/in" \
    "$MEMORY_CHECKPOINT_DIR:$MEMORY_CHECKPOINT_DIR" "$(dirname "$tok"):$(dirname "$tok")" | LC_ALL=C sort | tr '\n' , | sed 's/,$//')"

# The outcome: the bare run's.
loss() { sed -n 's/^\[eval\] \(loss=[^ ]*\) .*windows=8$/\1/p' "$WORK/$1.out"; }
b=$(loss bare) c=$(loss ctr)
if [[ -n $b && $b == "$c" ]]; then pass "the same eval ($c, 8 windows)"; else fail "eval: bare '$b', container '$c'"; fi
expect "the same exported weights" cmp "$WORK/bare/hf-out/model.safetensors" "$WORK/ctr/hf-out/model.safetensors"
ba=$(compgen -G "$WORK/bare/logs/answers-*.jsonl" || true) ca=$(compgen -G "$WORK/ctr/logs/answers-*.jsonl" || true)
expect "answers to all 16 prompts" test "$(wc -l <"${ca:-/dev/null}")" -eq 16
expect "the same answers" cmp "${ba:-/dev/null}" "${ca:-/dev/null}"
nodes_idle
finish
