#!/usr/bin/env bash
# Failures never leave a half-installed node: a plugin srun cannot load is
# refused before anything changes; a failed verification or daemon reload
# puts every file back (and reloads again); a journal left by a crashed run
# is rolled back by the next run.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"

# (a) A plugin this node's srun cannot load: refused by the preflight.
cp -a "$WORK/prefix" "$WORK/broken"
echo "not an ELF file" >"$WORK/broken/lib/slurm/spank_wireup.so"
R=$WORK/a
make_root "$R"
before=$(snapshot "$R")
FROM_PREFIX=$WORK/broken FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "broken plugin: run fails" "$RC" 1
contains "broken plugin: reason" "$OUT" "srun on this node cannot load the new spank_wireup.so"
contains "broken plugin: srun's words" "$OUT" "file too short"
check "broken plugin: node unchanged" "$(snapshot "$R")" "$before"
check "broken plugin: no daemon touched" "$(daemon_calls "$R")" ""

# (b) Installed v1; v2 (new wireup-env, new arguments) fails verification: v1 comes back.
R=$WORK/b
make_root "$R"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "v1 installs" "$RC" 0
before=$(snapshot "$R")
ps_before=$(cat "$R/opt/slurm/etc/plugstack.conf")
cp -a "$WORK/prefix" "$WORK/v2"
echo "v2" >>"$WORK/v2/share/wireup/README"
echo "new in v2" >"$WORK/v2/share/wireup/NEW"
: >"$R.daemons"
FROM_PREFIX=$WORK/v2 FAKE_VERIFY=fail FAKE_ACTIVE=slurmctld WIREUP_PLUGSTACK_ARGS="default=on" \
  run_on_create "$R" 10.1.0.10
echo "$OUT"
check "failed verification: run fails" "$RC" 1
contains "failed verification: reason" "$OUT" "does not list --wireup after registration; rolling back"
contains "failed verification: loud summary" "$OUT" "ERROR: wireup step failed; this node is back to its state before the run"
check "failed verification: plugstack.conf restored" "$(cat "$R/opt/slurm/etc/plugstack.conf")" "$ps_before"
check "failed verification: every file as before (content, mode, mtime)" "$(snapshot "$R")" "$before"
check "failed verification: reconfigured, then reconfigured again after the rollback" "$(daemon_calls "$R")" \
  "active slurmctld;reconfigure ;active slurmd;active slurmctld;reconfigure ;active slurmd;"

# (c) The reconfigure itself fails on a fresh node: nothing stays behind but the retry marker.
R=$WORK/c
make_root "$R"
before=$(cat "$R/opt/slurm/etc/plugstack.conf")
FAKE_FAIL=reconfigure FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "failed reconfigure: run fails" "$RC" 1
contains "failed reconfigure: reason" "$OUT" "'reconfigure' failed"
check "failed reconfigure: plugstack.conf restored" "$(cat "$R/opt/slurm/etc/plugstack.conf")" "$before"
check "failed reconfigure: only the retry marker left" \
  "$(cd "$R" && find usr var/lib -type f 2>/dev/null)" "var/lib/wireup/reload-pending"
: >"$R.daemons"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "retry after a failed reconfigure succeeds" "$RC" 0
check "retry reconfigures" "$(daemon_calls "$R")" "active slurmctld;reconfigure ;active slurmd;"
[[ ! -e $R/var/lib/wireup/reload-pending ]] && pass "retry clears the marker" || fail "marker still there"

# (d) A run that died half-way left its journal: the next run undoes it first.
R=$WORK/d
make_root "$R"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "install before the crash" "$RC" 0
good=$(cat "$R/opt/slurm/etc/plugstack.conf")
j=$R/var/lib/wireup/journal
mkdir -p "$j/files"
cp -a "$R/opt/slurm/etc/plugstack.conf" "$j/files/1"
printf 'old\t/opt/slurm/etc/plugstack.conf\t%s\nnew\t/usr/local/bin/wireup-half-written\t\n' "$j/files/1" >"$j/entries"
echo "optional /half/written.so" >>"$R/opt/slurm/etc/plugstack.conf"
touch "$R/usr/local/bin/wireup-half-written"
: >"$R.daemons"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "after a crash: run succeeds" "$RC" 0
contains "after a crash: says so" "$OUT" "an earlier run stopped half-way"
check "after a crash: plugstack.conf as before the crash" "$(cat "$R/opt/slurm/etc/plugstack.conf")" "$good"
[[ ! -e $R/usr/local/bin/wireup-half-written && ! -e $j ]] && pass "after a crash: half-written file and journal gone" ||
  fail "after a crash: leftovers"
check "after a crash: daemons reloaded anyway" "$(daemon_calls "$R")" "active slurmctld;reconfigure ;active slurmd;"
finish
