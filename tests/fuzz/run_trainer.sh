#!/usr/bin/env bash
# Builds the trainer's file fuzz targets (safetensors header and index, HF
# config.json, checkpoint metadata.json) with clang + libFuzzer + ASan/UBSan,
# writes their seed corpus (make_trainer_seeds: valid files of each kind) and
# runs each for its share of SECONDS. Usage: run_trainer.sh SOURCE_DIR WORK_DIR [SECONDS]
set -euo pipefail
src=$1 work=$2 secs=${3:-20}
secs=${secs:-20}
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [[ -z $cxx ]]; then
  echo "clang++ not found: install clang and libclang-rt-14-dev" >&2
  exit 1
fi
targets=(fuzz_safetensors fuzz_hf_config fuzz_checkpoint_meta)
flags=(-std=c++20 -O1 -g '-fsanitize=address,undefined' -fno-sanitize-recover=undefined
  -I"$src/common/include" -I"$src/trainer")
sources=("$src"/trainer/hf/{safetensors_header,hf_config}.cpp "$src"/trainer/eval/model_size.cpp
  "$src"/trainer/config/model_config.cpp "$src"/trainer/checkpoint/checkpoint_format.cpp
  "$src"/common/src/{text,file_io}.cpp)
mkdir -p "$work/obj"
rm -rf "$work/corpus"
objects=()
for s in "${sources[@]}"; do
  o=$work/obj/$(basename "$s" .cpp).o
  objects+=("$o")
  while (($(jobs -rp | wc -l) >= 2)); do wait -n; done
  "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$s" -o "$o" &
done
wait
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= 2)); do wait -n; done
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$src/tests/fuzz/$t.cpp" "${objects[@]}" -o "$work/$t" &
done
"$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link "$src/tests/fuzz/make_trainer_seeds.cpp" \
  "${objects[@]}" -o "$work/make_trainer_seeds"
wait
"$work/make_trainer_seeds" "$work/corpus"
share=$((secs / ${#targets[@]}))
((share >= 2)) || share=2
for t in "${targets[@]}"; do
  echo "== $t (${share}s)"
  "$work/$t" -max_total_time="$share" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix="$work/" \
    "$work/corpus/$t" 2>&1 | tail -3
done
