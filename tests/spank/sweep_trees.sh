#!/usr/bin/env bash
# The job epilog's sweep (through wireup_sweep_tool, the plugin's own code) on trees
# a job's user (nobody here) builds against it, as root like slurmd:
#   budget: a tree of 20,000 names and a budget of 5,000: the sweep stops at its
#           budget, says so with a count and a few names, keeps the marker, and its
#           memory stays that of a small tree; a budget of bytes of names likewise.
#   race:   the user renames an unremovable subtree ahead of the walk, in a loop: the
#           sweep ends within its budget and enters no directory twice.
#   mount:  a tmpfs of the user's mounted inside the tree (own mount namespace): not
#           entered, its file stays.
# Usage: sweep_trees.sh WIREUP_SWEEP_TOOL [budget|race|mount] (all but mount by default)
set -euo pipefail
source "$(dirname "$0")/../lib/assert.sh"
tool=$1
what=${2:-budget race}
if ((EUID != 0)); then
  echo "SKIP: the sweep runs as root in slurmd; these trees need root (chown, mount)"
  exit 77
fi
user=65534
work=$(mktemp -d "${TMPDIR:-/tmp}/wireup-sweep-trees.XXXXXX")
racer=
cleanup() {
  [[ -z $racer ]] || kill "$racer" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 1777 "$work"

# new_tree JOB: $work/wireup-JOB with the job's marker, the user's; prints its path.
new_tree() {
  local d=$work/wireup-$1
  mkdir -m 0700 "$d"
  printf 'wireup-memory-snapshot-owner 1\njob %s\nuid %s\n' "$1" "$user" >"$d/owner"
  echo "$d"
}
# sweep JOB ARGS...: the tool's output
sweep() { timeout 60 "$tool" "$work" "$1" "$user" "${@:2}"; }
field() { sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" <<<"$1"; }

if [[ $what == *budget* ]]; then
  base=$(sweep 1)  # nothing there: the tool's own memory
  d=$(new_tree 2)
  mkdir -p "$d/n0/a" "$d/n0/b"
  long=$(printf 'p%.0s' {1..200})
  seq -f "$d/n0/a/$long%06g" 10000 | xargs touch
  seq -f "$d/n0/b/$long%06g" 10000 | xargs touch
  chown -R "$user:$user" "$d"
  out=$(sweep 2 memory_snapshot_max_entries=5000)
  contains "the budget stops the sweep, and the log says so" "$out" \
    "stopped: its budget of 5000 entries (memory_snapshot_max_entries) was spent"
  check "no more names read than the budget" "$(field "$out" entries)" 5000
  contains "it names what it left unread" "$out" "wireup-2/n0/b: not all read"
  check "and counts what it left" "$(field "$out" left)" 2
  [[ -f $d/owner ]] && pass "the marker stays with what stays" || fail "the marker went"
  grow=$(($(field "$out" maxrss_kb) - $(field "$base" maxrss_kb)))
  ((grow < 4096)) && pass "memory bounded: ${grow} KB more than a sweep of nothing" ||
    fail "the sweep of a 20,000-name tree grew by ${grow} KB"
  out=$(sweep 2 memory_snapshot_max_name_bytes=65536)
  contains "a budget of bytes of names stops it too" "$out" \
    "its budget of 65536 bytes of names (memory_snapshot_max_name_bytes) was spent"
  out=$(sweep 2)
  contains "a later sweep with the default budget removes the rest" "$out" \
    "removed the memory snapshots $work/wireup-2 "
fi

# race_tree JOB: 8 directories of 400 files each, and d0/u, which holds a file of
# root's, so that it can never be removed; prints the tree's path.
race_tree() {
  local d i
  d=$(new_tree "$1")
  for i in 0 1 2 3 4 5 6 7; do
    mkdir -p "$d/d$i"
    seq -f "$d/d$i/f%04g" 400 | xargs touch
  done
  mkdir "$d/d0/u"
  touch "$d/d0/u/pin"
  chown -R "$user:$user" "$d"
  chown 0:0 "$d/d0/u/pin"
  echo "$d"
}
# entered_once WHAT OUTPUT [REASON]: no "enter DEV INO" line twice, within the budget;
# the tree is left, and the line names why (REASON, a regular expression).
entered_once() {
  local twice reason=${3:-"owned by uid 0, not the job's user"}
  twice=$(grep '^enter ' <<<"$2" | sort | uniq -d | head -3)
  check "$1: no directory entered twice ($(field "$2" dirs_entered) entered, $(field "$2" revisits) met again after a move)" "$twice" ""
  (($(field "$2" entries) <= 20000)) && pass "$1: within its budget" ||
    fail "$1: read $(field "$2" entries) names"
  contains "$1: the tree is left, not reported removed" "$2" "left the memory snapshots $work/wireup-"
  grep -Eq "$reason" <<<"$2" &&
    pass "$1: the unremovable subtree is named" ||
    fail "$1: no reason matching '$reason' in: $2"
}

if [[ $what == *race* ]]; then
  # At its worst: u is moved into each directory as the walk enters it.
  race_tree 3 >/dev/null
  out=$(sweep 3 --trace --chase=d0/u memory_snapshot_max_entries=20000)
  entered_once "u moved ahead of the walk each time" "$out"
  (($(field "$out" revisits) >= 1)) && pass "the moved subtree was met again and not walked again" ||
    fail "the chase did not happen: $out"
  # And by a process of the user's, renaming u round and round as fast as it can.
  d=$(race_tree 5)
  setpriv --reuid "$user" --regid "$user" --clear-groups bash -c '
    cd "$1" || exit 1
    while :; do
      for i in 0 1 2 3 4 5 6 7; do mv "d$i/u" "d$(((i + 1) % 8))/u" 2>/dev/null || true; done
    done' _ "$d" &
  racer=$!
  moved=
  for _ in $(seq 100); do
    compgen -G "$d/d[1-7]/u" >/dev/null && moved=1 && break
    sleep 0.05
  done
  [[ -n $moved ]] || fail "the user's renaming process never moved u"
  out=$(sweep 5 --trace memory_snapshot_max_entries=20000) || fail "the sweep did not end: $?"
  kill "$racer" && wait "$racer" 2>/dev/null || true
  racer=
  # Whether the walk meets u depends on where the user has moved it when each
  # directory is read: either the walk meets root's file, or u lands in a directory
  # already read and that directory's rmdir fails. Both leave the tree, named.
  entered_once "a user renaming u in a loop" "$out" \
    "owned by uid 0, not the job's user|/d[0-7]: rmdir: Directory not empty"
  [[ -f $(compgen -G "$d/d[0-7]/u/pin" | head -1) ]] && pass "root's file stays" ||
    fail "root's file went"
fi

if [[ $what == *mount* ]]; then
  if ! unshare -m true 2>/dev/null; then
    echo "SKIP: unshare -m is not permitted here, so no tmpfs can be mounted inside a tree"
    exit 77
  fi
  d=$(new_tree 4)
  mkdir -p "$d/n0/mnt"
  chown -R "$user:$user" "$d"
  out=$(unshare -m bash -c '
    mount -t tmpfs -o "mode=0700,uid=$2,gid=$2" none "$1/n0/mnt" || exit 77
    echo data >"$1/n0/mnt/victim" && chown "$2" "$1/n0/mnt/victim"
    "$3" "$4" 4 "$2"
    [[ -f $1/n0/mnt/victim ]] && echo "victim stays"' _ "$d" "$user" "$tool" "$work") || {
    rc=$?
    ((rc == 77)) && { echo "SKIP: mount -t tmpfs is not permitted in this sandbox"; exit 77; }
    fail "the mount namespace's sweep failed: $rc"
  }
  contains "a mount inside the tree is not entered, and named" "$out" \
    "n0/mnt: on another file system (a mount), not entered"
  contains "what the mount holds stays" "$out" "victim stays"
fi
finish
