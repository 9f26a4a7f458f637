#!/usr/bin/env bash
# Builds the parser fuzzer with clang + libFuzzer + ASan/UBSan and runs it for
# a bounded time. Usage: run.sh SOURCE_DIR WORK_DIR [SECONDS]
source "$(dirname "$0")/fuzz_lib.sh"
src=$1 work=$2 secs=${3:-20}
cxx=$(fuzz_cxx)
mkdir -p "$work/corpus"
bin=$work/fuzz_parsers
# shellcheck disable=SC2034 # read by fuzz_cache (fuzz_lib.sh)
SRC=$src
mapfile -t objects < <(fuzz_objects "$work/obj" "$cxx" "${FUZZ_FLAGS[@]}" \
  -I"$src/common/include" -I"$src/spank-plugin/logic/include" -- "$src/tests/fuzz/fuzz_parsers.cpp" \
  "$src"/common/src/{text,nodelist,env_plan,rendezvous,slurm_conf_nodes}.cpp \
  "$src"/spank-plugin/logic/{settings,plugstack_conf,ofi_nccl_install}.cpp)
[[ ! -e $work/obj/FAILED ]] || { echo "fuzz: compiling failed" >&2; exit 1; }
"$cxx" "${FUZZ_FLAGS[@]}" -fsanitize=fuzzer "${objects[@]}" -o "$bin"
i=0
while IFS= read -r seed; do
  printf '%s' "$seed" >"$work/corpus/seed$i"
  i=$((i + 1))
done <"$src/tests/fuzz/seeds.txt"
"$bin" -max_total_time="$secs" -max_len=256 -timeout=5 "$work/corpus" 2>&1 | tail -5
