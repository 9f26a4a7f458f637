#!/usr/bin/env bash
# Memory snapshots on a file system that cannot hold two of a node's snapshots:
# every rank refuses at start (exit 2), naming DIR, the room there and the
# size of one snapshot; nothing is trained. With room for two, the same run
# trains and removes its snapshots. A file system that fills up after the start
# fails the snapshots, not the run. Needs root for a small tmpfs; skipped (77)
# elsewhere.
source "$(dirname "$0")/lib.sh"
fs=$WORK/small
mkdir -p "$fs"
if [[ $(id -u) != 0 ]] || ! mount -t tmpfs -o size=3m,mode=0700 wireup-test "$fs" 2>/dev/null; then
  echo "SKIP: needs root to mount a 3 MiB tmpfs"
  exit 77
fi
trap 'umount "$fs" 2>/dev/null; [[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"' EXIT
# 4 ranks as 2 nodes sharing the 3 MiB: a node holds 2 parts and 2 replicas of
# ~470 KB, ~1.9 MB a snapshot, and two must fit.
run() {
  nodes 4 --preset tiny --synthetic_data --num_threads 1 --train_batch_size 1 --max_steps 4 \
    --memory_checkpoint_freq 2 --memory_checkpoint_dir "$1" >/dev/null 2>>"$WORK/err"
}
set +e
run "$fs/mem"
rc=$?
set -e
[[ $rc == 2 ]] && pass "too little room: exit 2" || fail "exit $rc: $(cat "$WORK/err")"
[[ $(grep -c "$fs/mem has room for .* bytes), but each snapshot of this node takes .* and two must fit" \
  "$WORK/err") == 4 ]] && pass "every rank names DIR, the room and the snapshot's size" ||
  fail "$(cat "$WORK/err")"
[[ ! -e $fs/mem/n0 ]] && pass "nothing written" || fail "written: $(find "$fs/mem")"
umount "$fs"
mount -t tmpfs -o size=64m,mode=0700 wireup-test "$fs"
: >"$WORK/err"
run "$fs/mem" && pass "with room for two: trained" || fail "$(cat "$WORK/err")"
[[ ! -e $fs/mem ]] && pass "and removed its snapshots" || fail "left: $(find "$fs/mem")"

# Room at start (a 3 MiB file of ours under DIR counts as reusable), none when a
# snapshot is written: its files are reserved before they are mapped, so the
# snapshot fails on every rank with the reason, and training goes on (no SIGBUS).
umount "$fs"
mount -t tmpfs -o size=4m,mode=0700 wireup-test "$fs"
mkdir -m 0700 "$fs/mem" "$fs/mem/n0"
head -c 3145728 /dev/zero >"$fs/mem/n0/filler"
: >"$WORK/err"
run "$fs/mem" && pass "a full file system at snapshot time: trained on" || fail "exit $?: $(cat "$WORK/err")"
[[ $(grep -c "memory snapshot of step 2 failed, not committed .*No space left on device" "$WORK/err") == 4 ]] &&
  pass "every rank reports the full file system" || fail "$(cat "$WORK/err")"
finish
