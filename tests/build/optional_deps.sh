#!/usr/bin/env bash
# Each optional dependency hidden in turn (WIREUP_HIDE_DEPS, cmake/WireupDeps.cmake):
# a fresh tree configures, its summary names what was skipped and why, and the
# targets that depended on the hidden library still build (issue #52: a missing
# ICU skipped wireup_tokenizer, and wireup_train_generate then failed to compile).
#
#   optional_deps.sh SOURCE_DIR TREE_PREFIX [DEP...]
#
# DEP: sentencepiece pcre2 icu torch pmix slurm onednn catch2 nccl (default: all).
# WIREUP_OPTDEPS_CMAKE_ARGS: more configure arguments (a build type, Torch_DIR).
# Each tree is TREE_PREFIX-DEP, kept for a look after a failure and reused next time.
# The suite passes BUILD_DIR/../NAME-hide: each tree is a sibling of the suite's build
# directory, at its depth, so that ccache (CCACHE_BASEDIR, as .ci/build.sh and the lane
# roots set it) sees the same relative paths and flags as in the suite's own build, and
# only the units that the hidden dependency changes compile again.
set -euo pipefail

usage="usage: optional_deps.sh SOURCE_DIR TREE_PREFIX [DEP...]"
src=${1:?$usage}
prefix=${2:?$usage}
mkdir -p "$(dirname "$prefix")"
prefix=$(cd "$(dirname "$prefix")" && pwd -P)/$(basename "$prefix")
shift 2
deps=("$@")
if [[ ${#deps[@]} -eq 0 ]]; then
  deps=(sentencepiece pcre2 icu torch pmix slurm onednn catch2 nccl)
fi

# DEP -> the targets that need it or built against it, all cheap (no LibTorch unit).
# The tokenizer libraries: generate's library and its unit tests, which must
# build and pass without wireup_tokenizer.
targets_for() {
  case $1 in
    sentencepiece | pcre2 | icu) echo "wireup_tokenizer_wire wireup_train_generate trainer_generate_tests" ;;
    torch) echo "wireup_data wireup_train_generate wireup_collective_deadline" ;;
    pmix) echo "wireup_launch_logic" ;;
    slurm) echo "wireup_spank_node" ;;
    onednn) echo "wireup_train_gemm" ;;
    catch2) echo "wireup_core" ;;
    nccl) echo "wireup_train_cuda_timer_stub" ;;
    *) return 1 ;;
  esac
}

# DEP -> the summary lines (-- wireup: skipped: PART (REASON)) it must print.
skipped_for() {
  case $1 in
    sentencepiece) echo "wireup_tokenizer, wireup_chat, wireup-prep (no SentencePiece (libsentencepiece-dev))" ;;
    pcre2) echo "wireup_tokenizer, wireup_chat, wireup-prep (no PCRE2 (libpcre2-dev))" ;;
    icu) echo "wireup_tokenizer, wireup_chat, wireup-prep (no ICU (libicu-dev))" ;;
    torch) echo "wireup-train (no LibTorch (libtorch-dev))" ;;
    pmix) echo "wireup-launch, wireup_pmix_bootstrap, wireup_nccl_bootstrap (no PMIx (libpmix-dev))" ;;
    slurm) echo "spank_wireup.so, wireup-env (no slurm/spank.h (libslurm-dev))" ;;
    onednn) echo "wireup-train oneDNN sgemm (no oneDNN (libdnnl-dev): ATen's mm instead)" ;;
    catch2) echo "tests (no Catch2 (catch2))" ;;
    nccl) echo "wireup_nccl_bootstrap (no nccl.h/libnccl.so under WIREUP_NCCL_HOME)" ;;
    *) return 1 ;;
  esac
}

extra=()
if [[ -n ${WIREUP_OPTDEPS_CMAKE_ARGS:-} ]]; then
  read -r -a extra <<<"$WIREUP_OPTDEPS_CMAKE_ARGS"
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # The suite's build, these trees and each other share ccache's results: paths under
  # CCACHE_BASEDIR (the lane's, else the source tree as .ci/build.sh has it) are hashed
  # relative to the compiler's directory, the same in every tree of the same depth.
  export CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=${CCACHE_BASEDIR:-$src}
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
fi
jobs=${WIREUP_OPTDEPS_JOBS:-2}

failed=()
for dep in "${deps[@]}"; do
  want_targets=$(targets_for "$dep") || { echo "unknown dependency: $dep" >&2; exit 2; }
  want_skipped=$(skipped_for "$dep")
  tree=$prefix-$dep
  mkdir -p "$tree"
  start=$SECONDS
  echo "== $dep: configure with WIREUP_HIDE_DEPS=$dep ($tree)"
  if ! cmake -S "$src" -B "$tree" -DWIREUP_HIDE_DEPS="$dep" "${launcher[@]}" "${extra[@]}" \
      >"$tree/configure.log" 2>&1; then
    tail -n 30 "$tree/configure.log"
    failed+=("$dep: configure failed ($tree/configure.log)")
    continue
  fi
  sed -n 's/^-- wireup: \(built\|skipped\): /  \1: /p' "$tree/configure.log"
  if ! grep -qF -- "-- wireup: skipped: $want_skipped" "$tree/configure.log"; then
    failed+=("$dep: the summary lacks 'skipped: $want_skipped'")
  fi
  # shellcheck disable=SC2086  # the list is words
  if ! cmake --build "$tree" -j "$jobs" --target $want_targets >"$tree/build.log" 2>&1; then
    grep -m 20 -E 'error|Error' "$tree/build.log" || tail -n 30 "$tree/build.log"
    failed+=("$dep: building $want_targets failed ($tree/build.log)")
    continue
  fi
  if [[ $want_targets == *trainer_generate_tests* ]] &&
    ! "$tree/tests/trainer/trainer_generate_tests" >"$tree/test.log" 2>&1; then
    tail -n 30 "$tree/test.log"
    failed+=("$dep: trainer_generate_tests failed ($tree/test.log)")
    continue
  fi
  echo "== $dep: built $want_targets ($((SECONDS - start)) s)"
done

if [[ ${#failed[@]} -gt 0 ]]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "optional dependencies: ${deps[*]}: each hidden, configured and built"
