#!/usr/bin/env bash
# Builds the data-file fuzz targets (tokenizer.json, tiktoken, manifest.json,
# the shard header and document index) with clang + libFuzzer + ASan/UBSan,
# writes their seed corpus (make_seeds: one valid file of each kind) and runs
# each for its share of SECONDS. Usage: run_data.sh SOURCE_DIR WORK_DIR [SECONDS]
# shellcheck disable=SC2034 # the arrays are read by fuzz_targets (fuzz_lib.sh)
source "$(dirname "$0")/fuzz_lib.sh"
SRC=$1
TARGETS=(fuzz_tokenizer_json fuzz_tiktoken fuzz_manifest fuzz_shard)
INCLUDES=(-I"$SRC/common/include" -I"$SRC/data/format/include" -I"$SRC/data/tokenizer/include")
LIBS=(-lpcre2-8 -licuuc -lcrypto)
SOURCES=("$SRC"/common/src/{text,sha256,file_io,escape_text,utf8}.cpp
  "$SRC"/data/format/src/{shard_format,shard_file,manifest}.cpp
  "$SRC"/data/tokenizer/src/{text_pieces,byte_level,tiktoken_file,known_vocabularies}.cpp
  "$SRC"/data/tokenizer/src/{hf_tokenizer_json,bpe_model,pretokenizer,added_tokens,unicode_nfc,bpe_tokenizer}.cpp)
SEEDS=make_seeds
fuzz_targets "$2" "${3:-20}" 16384
