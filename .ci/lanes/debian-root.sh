#!/usr/bin/env bash
# debian-root.sh: runs the whole suite (build + ctest) inside a Debian root of another
# release, created with debootstrap from the host's own configured apt mirror.
#
#   debian-root.sh SUITE            SUITE = trixie | sid (packages: .ci/lanes/SUITE.packages)
#
# The root lives in $WIREUP_LANES_DIR/SUITE (default /var/cache/wireup-lanes/SUITE) and is
# reused while the stamp in it (a hash of the package list, the suite and the mirror)
# matches. When only the package list changed, the missing packages are installed into
# the existing root; a root that cannot be updated (or another suite or mirror) is
# rebuilt from scratch. One run at a time per suite: a second waits on a lock (the root's
# /src, /build and test-cluster ports are shared). The source tree is bind-mounted read-only
# at /src; the build directory (/build/TREE, one per source tree: worktrees take turns at
# /src, and make's timestamps would keep another tree's newer objects) and ccache (/ccache)
# live in the root, so a rerun only rebuilds what changed. proc, sys, dev, dev/pts and
# dev/shm are mounted for the run and unmounted on every exit.
# Knobs: WIREUP_LANES_DIR, WIREUP_LANE_MIRROR (default: read from /etc/apt),
#        WIREUP_LANE_CTEST_ARGS (extra ctest arguments, e.g. "-R unit"),
#        WIREUP_LANE_COMMAND (a bash command run in /src after the build instead of ctest,
#        with WIREUP_LANE_BUILD=/build/TREE set, e.g. 'bench/launcher/run.sh "$WIREUP_LANE_BUILD"
#        /build/bench.md'; its exit code is the run's),
#        WIREUP_LANE_BUILD_TARGETS (build only these targets, e.g. for a WIREUP_LANE_COMMAND),
#        WIREUP_LANE_FUZZ_SECONDS (each fuzz test's budget here, default 8: the same targets,
#        corpus and seeds as the host lane's 20 s, which fuzzes the same parsers longer),
#        WIREUP_LANE_PREPARE_ONLY=1 (create or update the root, then stop: test.sh does this
#        in the background while the host lane builds, and the lane's run waits on the lock).
set -euo pipefail

readonly PROG=${0##*/}
die() { echo "$PROG: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }

(($# == 1)) || die "usage: $PROG trixie|sid"
suite=$1
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
# shellcheck source=.ci/lane-ctest.sh
source "$here/../lane-ctest.sh"
list=$here/$suite.packages
[[ -f $list ]] || die "no package list $list for suite '$suite' (expected trixie or sid)"
[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || die "debootstrap is missing (bash .ci/deps.sh installs it)"

lanes=${WIREUP_LANES_DIR:-/var/cache/wireup-lanes}
# Its own test-cluster ports, away from the host lane's (26810...) and other roots'.
case $suite in trixie) port=27810 ;; sid) port=28810 ;; *) port=29810 ;; esac
root=$lanes/$suite
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
((${#packages[@]})) || die "$list names no packages"

# The host's Debian mirror: the first URI of a deb source for the host's release, from
# deb822 .sources files or one-line .list files (disabled files are not read).
host_mirror() {
  local codename f
  # shellcheck disable=SC1091
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v cn="$codename" '
      function flush() { if (deb && suite_ok && uri != "") { print uri; found = 1; exit } deb = suite_ok = 0; uri = "" }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == cn) suite_ok = 1 }
      tolower($1) == "enabled:" && tolower($2) == "no" { deb = 0 }
      END { if (!found) flush() }' "$f"
  done
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk -v cn="$codename" '$1 == "deb" {
      i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++; if ($i ~ /^\[/ || $i ~ /\]$/) i++
      if ($(i + 1) == cn) print $i }' || true
}
mirror=${WIREUP_LANE_MIRROR:-$(host_mirror | head -n 1 || true)}
[[ -n $mirror ]] || die "no Debian mirror found in /etc/apt/sources.list(.d) (set WIREUP_LANE_MIRROR)"

stamp=$( { echo "$suite"; echo "$mirror"; printf '%s\n' "${packages[@]}"; } | sha256sum | cut -c1-16)
# The root's origin (suite and mirror) without the package list: an update in place is
# allowed only while this matches.
origin=$( { echo "$suite"; echo "$mirror"; } | sha256sum | cut -c1-16)

mkdir -p "$lanes"
exec 9>"$lanes/$suite.lock"
if ! flock -n 9; then
  note "another $suite lane run holds $lanes/$suite.lock; waiting"
  flock 9
fi

# ------------------------------------------------------------------ mounts
mounted=()
# shellcheck disable=SC2317 # called by the EXIT trap
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null ||
      note "warning: could not unmount ${mounted[i]}"
  done
  mounted=()
}
trap unmount_all EXIT
trap 'exit 130' INT TERM

mount_into() { # mount_into TARGET-IN-ROOT mount-args...
  local target=$root$1
  shift
  mkdir -p "$target"
  mountpoint -q "$target" && umount -l "$target"
  mount "$@" "$target" || die "cannot mount $target"
  mounted+=("$target")
}

mount_all() {
  # The root a mount point of its own (a private one): unshare --propagation private (the
  # test cluster's hosts naming) needs / to be a mount point inside the root.
  mount_into "" --bind "$root"
  mount --make-private "$root" || die "cannot make $root a private mount"
  mount_into /proc -t proc proc
  mount_into /sys -t sysfs sysfs
  mount_into /dev --bind /dev
  mount_into /dev/pts -t devpts -o newinstance,ptmxmode=0666 devpts
  mount_into /dev/shm -t tmpfs -o mode=1777 tmpfs
  mount_into /src --bind "$src"
  mount -o remount,bind,ro "$root/src" || die "cannot make $root/src read-only"
}

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CCACHE_DIR=/ccache CCACHE_BASEDIR=/ CCACHE_NOHASHDIR=true CCACHE_SLOPPINESS=pch_defines,time_macros DEBIAN_FRONTEND=noninteractive "$@"
}

# ------------------------------------------------------------------ the root
create_root() {
  note "creating the $suite root in $root from $mirror (stamp $stamp)"
  # Nothing may still be mounted below an old root before it is deleted.
  if grep -q " $root/" /proc/mounts; then die "something is still mounted under $root"; fi
  rm -rf -- "$root" "$root.new"
  mkdir -p "$lanes"
  debootstrap --variant=minbase "$suite" "$root.new" "$mirror" >"$lanes/$suite.debootstrap.log" 2>&1 ||
    { tail -n 20 "$lanes/$suite.debootstrap.log" >&2; die "debootstrap $suite failed (log: $lanes/$suite.debootstrap.log)"; }
  echo "deb $mirror $suite main" >"$root.new/etc/apt/sources.list"
  # The root trusts its Release files as the host does: a mirror that serves a dated
  # snapshot (sid's Release expires within days) needs this; copied when the host says false.
  if grep -rqsiE 'Check-Valid-Until[[:space:]]+"?false' /etc/apt/apt.conf.d/; then
    echo 'Acquire::Check-Valid-Until "false";' >"$root.new/etc/apt/apt.conf.d/99wireup-lane"
  fi
  cp /etc/resolv.conf "$root.new/etc/resolv.conf" 2>/dev/null || true
  # Daemons must not start inside the root while packages are installed.
  printf '#!/bin/sh\nexit 101\n' >"$root.new/usr/sbin/policy-rc.d"
  chmod 755 "$root.new/usr/sbin/policy-rc.d"
  mv -- "$root.new" "$root"
  mount_all
  in_root apt-get update -qq || die "apt-get update failed in the $suite root"
  in_root apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$lanes/$suite.apt.log" 2>&1 ||
    { tail -n 30 "$lanes/$suite.apt.log" >&2; die "installing the $suite packages failed (log: $lanes/$suite.apt.log)"; }
  in_root apt-get clean
  # LibTorch calls whatever libblas.so.3 points to; make it OpenBLAS, as deps.sh does.
  # shellcheck disable=SC2016 # expanded inside the root
  in_root sh -c 'alt=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3;
    [ ! -e $alt ] || update-alternatives --set libblas.so.3-x86_64-linux-gnu $alt >/dev/null'
  echo "$stamp" >"$root/.wireup-lane-stamp"
  echo "$origin" >"$root/.wireup-lane-origin"
}

# Installs the packages the list gained into the existing root (apt skips those present).
update_root() {
  note "updating the $suite root in $root to the package list (stamp $stamp)"
  mount_all
  in_root apt-get update -qq &&
    in_root apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$lanes/$suite.apt.log" 2>&1 &&
    in_root apt-get clean || return 1
  echo "$stamp" >"$root/.wireup-lane-stamp"
}

if [[ -f $root/.wireup-lane-stamp && $(cat "$root/.wireup-lane-stamp") == "$stamp" ]]; then
  note "reusing the $suite root in $root (stamp $stamp)"
  mount_all
elif [[ -f $root/.wireup-lane-origin && $(cat "$root/.wireup-lane-origin") == "$origin" ]] && update_root; then
  :
else
  unmount_all
  create_root
fi
cp /etc/hosts "$root/etc/hosts"
if [[ ${WIREUP_LANE_PREPARE_ONLY:-0} == 1 ]]; then
  note "the $suite root is ready"
  exit 0
fi
# This source tree's build directory in the root: its path's hash.
build=/build/$(printf '%s' "$src" | sha256sum | cut -c1-12)
mkdir -p "$root$build" "$root/ccache"

# shellcheck disable=SC2016 # dpkg-query's format
versions=$(in_root dpkg-query -W -f='${Package} ${Version}\n' slurmd libpmix-dev openmpi-bin \
  libfabric-dev libtorch-dev python3-torch libdnnl-dev catch2 2>/dev/null | tr '\n' ';')
note "$suite: $versions"

t0=$(date +%s)
# shellcheck disable=SC2016 # expanded inside the root
in_root bash -c 'set -e; cd /src
  launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S /src -B '"$build"' -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWIREUP_CLUSTER_PORT='"$port"' \
    -DWIREUP_FUZZ_SECONDS='"${WIREUP_LANE_FUZZ_SECONDS:-8}"' "${launcher[@]}"
  cmake --build '"$build"' -j "$(nproc)" '"${WIREUP_LANE_BUILD_TARGETS:+--target $WIREUP_LANE_BUILD_TARGETS}" || die "the $suite build failed"
t1=$(date +%s)
rc=0
if [[ -n ${WIREUP_LANE_COMMAND:-} ]]; then
  in_root bash -c "cd /src && export WIREUP_LANE_BUILD=$build && $WIREUP_LANE_COMMAND" || rc=$?
  echo "lane $suite: build $((t1 - t0)) s, command $(($(date +%s) - t1)) s, exit $rc"
  exit "$rc"
fi
# Debian sid's Slurm (26.05) ships no mpi/pmix plugin, so the tests labelled slurm_pmix
# (they run srun --mpi=pmix) cannot run there: only the sid lane leaves them out, and says
# so; in every other lane they run, and a missing plugin fails them.
skipped=""
if [[ $suite == sid ]] && ! in_root sh -c 'ls /usr/lib/*/slurm-wlm/mpi_pmix*.so' >/dev/null 2>&1; then
  skipped="-LE slurm_pmix"
  note "sid: Slurm has no mpi/pmix plugin; the tests labelled slurm_pmix are not run"
fi
mark=$(cpu_mark)
# shellcheck disable=SC2086 # extra ctest arguments split on purpose
in_root bash -c "cd $build && ctest --output-on-failure -j $LANE_CTEST_JOBS --timeout 900 $skipped ${WIREUP_LANE_CTEST_ARGS:-}" || rc=$?
t2=$(date +%s)
echo "lane $suite: build $((t1 - t0)) s, tests $((t2 - t1)) s ($(cpu_busy_since "$mark")), ctest exit $rc${skipped:+ (slurm_pmix tests not run: no mpi/pmix plugin)}" >"$lanes/$suite.last"
cat "$lanes/$suite.last"
exit "$rc"
