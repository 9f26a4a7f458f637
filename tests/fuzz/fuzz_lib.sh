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
# ccache (in deps.sh) keeps the instrumented objects of unchanged sources: another run, or
# another clone whose build directory sits at the same place below its source tree, compiles
# only what changed (paths below SRC hashed as relative ones, as .ci/build.sh does).
fuzz_cache() {
  if command -v ccache >/dev/null; then
    CCACHE_BASEDIR=${CCACHE_BASEDIR:-$SRC} CCACHE_NOHASHDIR=true ccache "$@"
  else
    "$@"
  fi
}

# fuzz_objects OBJ_DIR CXX FLAGS... -- SOURCES...: compiles each source (two at a time,
# through ccache) into OBJ_DIR for linking with -fsanitize=fuzzer; prints the objects.
fuzz_objects() {
  local dir=$1 cxx=$2 s o
  shift 2
  local flags=()
  while [[ $1 != -- ]]; do flags+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  rm -f "$dir/FAILED"
  for s in "$@"; do
    o=$dir/$(basename "$s" .cpp).o
    echo "$o"
    while (($(jobs -rp | wc -l) >= 2)); do wait -n || true; done
    { fuzz_cache "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$s" -o "$o" >&2 ||
        touch "$dir/FAILED"; } &
  done
  wait
  [[ ! -e $dir/FAILED ]]
}

# fuzz_targets WORK SECS MAX_LEN: compiles SOURCES once (fuzz_objects), links
# each of TARGETS (tests/fuzz/TARGET.cpp) and the SEEDS program against them,
# writes the seed corpus (SEEDS WORK/corpus: WORK/corpus/TARGET/...) and runs
# each target for its share of SECS (at least 2 s). Reads the caller's arrays
# TARGETS, SOURCES, INCLUDES (-I flags), LIBS and its SRC and SEEDS (a .cpp
# under tests/fuzz without the extension).
fuzz_targets() {
  local work=$1 secs=$2 max_len=$3 cxx t
  cxx=$(fuzz_cxx)
  local flags=("${FUZZ_FLAGS[@]}" "${INCLUDES[@]}")
  rm -rf "$work/corpus"
  local objects main_sources=()
  for t in "${TARGETS[@]}" "$SEEDS"; do main_sources+=("$SRC/tests/fuzz/$t.cpp"); done
  mapfile -t objects < <(fuzz_objects "$work/obj" "$cxx" "${flags[@]}" -- "${SOURCES[@]}")
  fuzz_objects "$work/main" "$cxx" "${flags[@]}" -- "${main_sources[@]}" >/dev/null || true
  [[ ! -e $work/obj/FAILED && ! -e $work/main/FAILED ]] || { echo "fuzz: compiling failed" >&2; exit 1; }
  rm -f "$work/FAILED"
  for t in "${TARGETS[@]}" "$SEEDS"; do
    while (($(jobs -rp | wc -l) >= 2)); do wait -n || true; done
    local sanitizer=-fsanitize=fuzzer
    [[ $t != "$SEEDS" ]] || sanitizer=-fsanitize=fuzzer-no-link
    { "$cxx" "${FUZZ_FLAGS[@]}" "$sanitizer" "$work/main/$t.o" "${objects[@]}" "${LIBS[@]}" \
        -o "$work/$t" || touch "$work/FAILED"; } &
  done
  wait
  [[ ! -e $work/FAILED ]] || { echo "fuzz: linking failed" >&2; exit 1; }
  "$work/$SEEDS" "$work/corpus"
  local share=$((secs / ${#TARGETS[@]}))
  ((share >= 2)) || share=2
  for t in "${TARGETS[@]}"; do
    echo "== $t (${share}s)"
    "$work/$t" -max_total_time="$share" -max_len="$max_len" -timeout=5 -rss_limit_mb=2048 \
      -artifact_prefix="$work/" "$work/corpus/$t" 2>&1 | tail -3
  done
}
