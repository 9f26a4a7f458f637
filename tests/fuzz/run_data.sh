#!/usr/bin/env bash
# Builds the data-file fuzz targets (tokenizer.json, tiktoken, manifest.json,
# the shard header and document index) with clang + libFuzzer + ASan/UBSan,
# writes their seed corpus (make_seeds: one valid file of each kind) and runs
# each for its share of SECONDS. Usage: run_data.sh SOURCE_DIR WORK_DIR [SECONDS]
set -euo pipefail
src=$1 work=$2 secs=${3:-20}
secs=${secs:-20}
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [[ -z $cxx ]]; then
  echo "clang++ not found: install clang and libclang-rt-14-dev" >&2
  exit 1
fi
targets=(fuzz_tokenizer_json fuzz_tiktoken fuzz_manifest fuzz_shard)
flags=(-std=c++20 -O1 -g '-fsanitize=address,undefined' -fno-sanitize-recover=undefined
  -I"$src/common/include" -I"$src/data/format/include" -I"$src/data/tokenizer/include")
libs=(-lpcre2-8 -lcrypto)
sources=("$src"/common/src/{text,sha256,file_io}.cpp
  "$src"/data/format/src/{shard_format,shard_file,manifest}.cpp
  "$src"/data/tokenizer/src/{utf8,text_pieces,byte_level,tiktoken_file,known_vocabularies}.cpp
  "$src"/data/tokenizer/src/{hf_tokenizer_json,bpe_model,pretokenizer,bpe_tokenizer}.cpp)
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
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$src/tests/fuzz/$t.cpp" "${objects[@]}" "${libs[@]}" \
    -o "$work/$t" &
done
"$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link "$src/tests/fuzz/make_seeds.cpp" "${objects[@]}" \
  "${libs[@]}" -o "$work/make_seeds"
wait
"$work/make_seeds" "$work/corpus"
share=$((secs / ${#targets[@]}))
((share >= 2)) || share=2
for t in "${targets[@]}"; do
  echo "== $t (${share}s)"
  "$work/$t" -max_total_time="$share" -max_len=16384 -timeout=5 -rss_limit_mb=2048 \
    "$work/corpus/$t" 2>&1 | tail -3
done
