#!/bin/bash
# Agent mode without --log-dir keeps its run files in a fresh private directory
# (mkdtemp under $TMPDIR): whatever another user put at a predictable name there
# (a file, a symlink, a world-writable directory of theirs) neither blocks the
# run nor receives its files; an unsafe or missing TMPDIR is a clear error.
. "$(dirname "$0")/lib.sh" "$@"
unset PMIX_NAMESPACE SLURM_PROCID
me=$(id -u)
base="$TMP/base"
mkdir -m 1777 "$base"
old="$base/wireup-launch-$me"  # the name every run used to share
# Each worker prints its run directory (TORCHELASTIC_ERROR_FILE = DIR/attempt_0/RANK/error.json)
# with its owner and mode.
# shellcheck disable=SC2016 # expanded by the worker
show='d=$(dirname "$(dirname "$(dirname "$TORCHELASTIC_ERROR_FILE")")"); echo "dir=$d owner=$(stat -c %u "$d") mode=$(stat -c %a "$d")"'

run_private() {  # NAME: runs 2 workers with TMPDIR=$base; checks where their files went
  TMPDIR="$base" "$WL" --standalone --nproc-per-node=2 --no-prefix -- sh -c "$show" \
    >"$TMP/$1" 2>&1 || { cat "$TMP/$1"; fail "$1: the run failed"; }
  file_count "$1" "$TMP/$1" "^dir=$base/wireup-launch-$me\.[A-Za-z0-9]{6} owner=$me mode=700$" 2
  local d; d=$(sed -n 's/^dir=\([^ ]*\) .*/\1/p' "$TMP/$1" | head -1)
  [ ! -e "$d" ] || fail "$1: the run directory $d outlived the run"
}

# 1. A file at the old name.
echo "not a directory" >"$old"
run_private file
[ "$(cat "$old")" = "not a directory" ] || fail "the file at $old was changed"
rm -f "$old"

# 2. A symlink at the old name, to a directory another user watches.
mkdir -m 777 "$TMP/elsewhere"
ln -s "$TMP/elsewhere" "$old"
run_private symlink
[ -z "$(ls -A "$TMP/elsewhere")" ] || fail "run files were placed through the symlink $old"
rm -f "$old"

# 3. A world-writable directory at the old name, owned by another user.
mkdir -m 777 "$old"
if [ "$me" = 0 ] && id nobody >/dev/null 2>&1; then chown nobody "$old"; else
  echo "note: not root; the foreign directory is owned by this user"; fi
run_private foreign_dir
[ -z "$(ls -A "$old")" ] || fail "run files were placed in the foreign directory $old"

# 4. TMPDIR writable by others and not sticky: refused, naming it; no worker runs.
mkdir -m 777 "$TMP/open"
chmod 777 "$TMP/open"
TMPDIR="$TMP/open" "$WL" --standalone --nproc-per-node=1 -- sh -c 'echo RAN' >"$TMP/open.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/open.out"; fail "unsafe TMPDIR: exit $rc, expected 1"; }
file_contains "open.out" "$TMP/open.out" "run directory: $TMP/open is writable by other users and not sticky"
file_count "open.out" "$TMP/open.out" 'RAN' 0

# 5. TMPDIR missing, or a file.
TMPDIR="$TMP/missing" "$WL" --standalone --nproc-per-node=1 -- true >"$TMP/missing.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/missing.out"; fail "missing TMPDIR: exit $rc, expected 1"; }
file_contains "missing.out" "$TMP/missing.out" "run directory: cannot use $TMP/missing: No such file or directory"
TMPDIR="$TMP/open.out" "$WL" --standalone --nproc-per-node=1 -- true >"$TMP/f.out" 2>&1
[ $? -eq 1 ] || fail "TMPDIR naming a file: expected exit 1"
file_contains "f.out" "$TMP/f.out" "is not a directory"
pass "private run directory: file, symlink, foreign directory at the old name; unsafe and missing TMPDIR"
