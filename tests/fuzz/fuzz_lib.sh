# shellcheck shell=bash
# What the fuzz scripts share (sourced): the compiler, the sanitizer flags, and
# one build-seed-run sequence for a set of libFuzzer targets.
set -euo pipefail

# The clang++ that has libFuzzer (Debian: clang + libclang-rt-NN-dev).
fuzz_cxx() {
  local cxx
  cxx=$(command -v clang++ || command -v clang++-14 || true)
  [[ -n $cxx ]] || { echo "clang++ not found: install clang and libclang-rt-14-dev" >&2; exit 1; }
  echo "$cxx"
}
FUZZ_FLAGS=(-std=c++20 -O1 -g '-fsanitize=address,undefined' -fno-sanitize-recover=undefined)

# fuzz_targets WORK SECS MAX_LEN: compiles SOURCES once (two at a time), links
# each of TARGETS (tests/fuzz/TARGET.cpp) and the SEEDS program against them,
# writes the seed corpus (SEEDS WORK/corpus: WORK/corpus/TARGET/...) and runs
# each target for its share of SECS (at least 2 s). Reads the caller's arrays
# TARGETS, SOURCES, INCLUDES (-I flags), LIBS and its SRC and SEEDS (a .cpp
# under tests/fuzz without the extension).
fuzz_targets() {
  local work=$1 secs=$2 max_len=$3 cxx s o t
  cxx=$(fuzz_cxx)
  local flags=("${FUZZ_FLAGS[@]}" "${INCLUDES[@]}")
  mkdir -p "$work/obj"
  rm -rf "$work/corpus"
  local objects=()
  for s in "${SOURCES[@]}"; do
    o=$work/obj/$(basename "$s" .cpp).o
    objects+=("$o")
    while (($(jobs -rp | wc -l) >= 2)); do wait -n; done
    "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$s" -o "$o" &
  done
  wait
  for t in "${TARGETS[@]}"; do
    while (($(jobs -rp | wc -l) >= 2)); do wait -n; done
    "$cxx" "${flags[@]}" -fsanitize=fuzzer "$SRC/tests/fuzz/$t.cpp" "${objects[@]}" "${LIBS[@]}" \
      -o "$work/$t" &
  done
  "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link "$SRC/tests/fuzz/$SEEDS.cpp" "${objects[@]}" \
    "${LIBS[@]}" -o "$work/$SEEDS"
  wait
  "$work/$SEEDS" "$work/corpus"
  local share=$((secs / ${#TARGETS[@]}))
  ((share >= 2)) || share=2
  for t in "${TARGETS[@]}"; do
    echo "== $t (${share}s)"
    "$work/$t" -max_total_time="$share" -max_len="$max_len" -timeout=5 -rss_limit_mb=2048 \
      -artifact_prefix="$work/" "$work/corpus/$t" 2>&1 | tail -3
  done
}
