#!/usr/bin/env bash
# Builds the trainer's file fuzz targets (safetensors header and index, HF
# config.json, checkpoint metadata.json, a memory snapshot's manifest, node
# report and part header) with clang + libFuzzer + ASan/UBSan,
# writes their seed corpus (make_trainer_seeds: valid files of each kind) and
# runs each for its share of SECONDS. Usage: run_trainer.sh SOURCE_DIR WORK_DIR [SECONDS]
# shellcheck disable=SC2034 # the arrays are read by fuzz_targets (fuzz_lib.sh)
source "$(dirname "$0")/fuzz_lib.sh"
SRC=$1
TARGETS=(fuzz_safetensors fuzz_hf_config fuzz_checkpoint_meta fuzz_memory_snapshot)
INCLUDES=(-I"$SRC/common/include" -I"$SRC/trainer" -I"$SRC/tests/trainer/checkpoint")
LIBS=()
SOURCES=("$SRC"/trainer/hf/{safetensors_header,hf_config}.cpp "$SRC"/trainer/eval/model_size.cpp
  "$SRC"/trainer/models/{model_config,family_registry}.cpp "$SRC"/trainer/models/llama/llama_family.cpp
  "$SRC"/trainer/models/qwen/qwen_family.cpp "$SRC"/trainer/checkpoint/{checkpoint_format,adapter_meta,dpo_meta,run_identity}.cpp
  "$SRC"/trainer/lora/lora_config.cpp "$SRC"/trainer/preference/dpo_objective.cpp
  "$SRC"/trainer/checkpoint/memory_snapshot_{manifest,part,dir,plan}.cpp
  "$SRC"/common/src/{text,escape_text,utf8,file_io,crc32c,memory_snapshot_owner}.cpp)
SEEDS=make_trainer_seeds
fuzz_targets "$2" "${3:-20}" 4096
