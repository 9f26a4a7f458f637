#!/usr/bin/env bash
# stage_wireup.sh STAGE: puts the wireup files to install into STAGE, an empty
# directory laid out like an install prefix (bin/, lib/slurm/spank_wireup.so,
# share/wireup/...). Writes nothing on the node except a source build's cache.
#
# From, in this order (the first one set wins):
#   WIREUP_FROM_DEB=FILE      a package made by `cpack -G DEB` (cmake/WireupPackaging.cmake)
#   WIREUP_FROM_PREFIX=DIR    a `cmake --install` prefix
#   WIREUP_FROM_BUILD=DIR     a built CMake tree (installed with `cmake --install DIR`)
#   WIREUP_FROM_SOURCE=DIR    a source tree, built here against the node's Slurm
#                             headers (WIREUP_SLURM_INCLUDE, default /opt/slurm/include)
# None set: the newest wireup_*.deb beside these scripts or one directory up
# (the S3 prefix HyperPod downloaded), else the source tree around them.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

stage_deb() {
  local deb=$1 x plugin prefix
  [[ -f $deb ]] || die "package $deb not found"
  command -v dpkg-deb >/dev/null || die "dpkg-deb not found: cannot unpack $deb"
  x=$SCRATCH/deb
  mkdir -p "$x"
  dpkg-deb -x "$deb" "$x" || die "$deb: not a readable .deb"
  plugin=$(find "$x" -name "$PLUGIN_NAME" -print -quit)
  [[ -n $plugin ]] || die "$deb holds no $PLUGIN_NAME (was it built without Slurm headers?)"
  # The package's install prefix: the directory above lib/[multiarch/]slurm.
  [[ $plugin =~ ^(.*)/lib(/[^/]+)?/slurm/$PLUGIN_NAME$ ]] ||
    die "$deb: $PLUGIN_NAME is not under <prefix>/lib/slurm (${plugin#"$x"})"
  prefix=${BASH_REMATCH[1]}
  cp -a -- "$prefix/." "$STAGE/"
}

stage_source() {
  local src=$1 inc build
  [[ -f $src/CMakeLists.txt ]] || die "$src is not a wireup source tree (no CMakeLists.txt)"
  command -v cmake >/dev/null || die "cmake not found: cannot build wireup from $src (install a .deb instead)"
  inc=$(node_path "$SLURM_INCLUDE")
  [[ -f $inc/slurm/spank.h ]] ||
    die "Slurm headers not found at $SLURM_INCLUDE/slurm/spank.h; set WIREUP_SLURM_INCLUDE to the headers of the Slurm that runs here (a plugin built against other headers does not load)"
  # A persistent build tree makes a re-run an incremental no-op; a dry run builds in a temp one.
  if dry; then build=$SCRATCH/build; else build=$(node_path "${WIREUP_BUILD_CACHE:-/var/cache/wireup/build}"); fi
  mkdir -p "$build"
  log "building wireup from $src against $SLURM_INCLUDE (in $build)"
  # shellcheck disable=SC2086 # WIREUP_CMAKE_ARGS is a list of -D options
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local \
    -DWIREUP_SLURM_INCLUDE_DIR="$inc" -DBUILD_TESTING=OFF -DWIREUP_CLUSTER_TESTS=OFF \
    ${WIREUP_CMAKE_ARGS:-} >"$build/lifecycle-configure.log" 2>&1 ||
    die "cmake configure failed; see $build/lifecycle-configure.log"
  cmake --build "$build" -j "$(nproc)" >"$build/lifecycle-build.log" 2>&1 ||
    die "build failed; see $build/lifecycle-build.log"
  cmake --install "$build" --prefix "$STAGE" >/dev/null || die "cmake --install $build failed"
}

# Default source: a package uploaded beside the lifecycle scripts, else the tree they sit in.
find_default() {
  local deb
  deb=$(find "$LC_DIR" "$LC_DIR/.." -maxdepth 1 -name 'wireup_*.deb' -printf '%f\t%p\n' 2>/dev/null |
    sort -V | tail -n 1 | cut -f 2)
  if [[ -n $deb ]]; then
    WIREUP_FROM_DEB=$deb
  elif grep -qs 'project(wireup' "$LC_DIR/../CMakeLists.txt"; then
    WIREUP_FROM_SOURCE=$(cd "$LC_DIR/.." && pwd)
  else
    die "nothing to install: put wireup_<version>_amd64.deb (cpack -G DEB) beside on_create.sh, or set WIREUP_FROM_DEB, WIREUP_FROM_PREFIX, WIREUP_FROM_BUILD or WIREUP_FROM_SOURCE"
  fi
}

main() {
  (($# == 1)) || die "usage: stage_wireup.sh STAGE_DIR"
  STAGE=$1
  lc_settings
  SCRATCH=$(mktemp -d)
  trap 'rm -rf -- "$SCRATCH"' EXIT
  mkdir -p "$STAGE"
  [[ -z $(ls -A "$STAGE") ]] || die "stage directory $STAGE is not empty"
  [[ -n ${WIREUP_FROM_DEB:-}${WIREUP_FROM_PREFIX:-}${WIREUP_FROM_BUILD:-}${WIREUP_FROM_SOURCE:-} ]] || find_default
  if [[ -n ${WIREUP_FROM_DEB:-} ]]; then
    log "installing from package $WIREUP_FROM_DEB"
    stage_deb "$WIREUP_FROM_DEB"
  elif [[ -n ${WIREUP_FROM_PREFIX:-} ]]; then
    log "installing from prefix $WIREUP_FROM_PREFIX"
    [[ -d $WIREUP_FROM_PREFIX ]] || die "prefix $WIREUP_FROM_PREFIX is not a directory"
    cp -a -- "$WIREUP_FROM_PREFIX/." "$STAGE/"
  elif [[ -n ${WIREUP_FROM_BUILD:-} ]]; then
    log "installing from build tree $WIREUP_FROM_BUILD"
    [[ -f $WIREUP_FROM_BUILD/cmake_install.cmake ]] || die "$WIREUP_FROM_BUILD is not a CMake build tree"
    cmake --install "$WIREUP_FROM_BUILD" --prefix "$STAGE" >/dev/null ||
      die "cmake --install $WIREUP_FROM_BUILD failed (build every target first: cmake --build $WIREUP_FROM_BUILD)"
  else
    stage_source "$WIREUP_FROM_SOURCE"
  fi
  local n
  n=$(find "$STAGE" -name "$PLUGIN_NAME" | wc -l)
  ((n == 1)) || die "the staged files hold $n copies of $PLUGIN_NAME, expected exactly one"
}

main "$@"
