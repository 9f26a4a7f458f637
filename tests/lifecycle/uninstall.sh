#!/usr/bin/env bash
# `on_create.sh --uninstall` takes wireup off a node: the plugstack.conf is
# back byte for byte, the installed files and /var/lib/wireup are gone,
# shared directories stay, slurmctld reconfigures. A second uninstall
# changes nothing.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"
R=$WORK/node
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
original=$(sha256sum <"$ps")
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "install succeeds" "$RC" 0

: >"$R.daemons"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10 --uninstall
echo "$OUT"
check "uninstall succeeds" "$RC" 0
check "plugstack.conf byte-identical to before the install" "$(sha256sum <"$ps")" "$original"
check "no wireup file left" "$(cd "$R" && find . -path ./var/log -prune -o -path '*wireup*' -print)" ""
[[ -d $R/usr/local/bin && -d $R/usr/local/lib/slurm ]] && pass "shared directories kept" || fail "shared directory removed"
check "reconfigured after removing the line" "$(daemon_calls "$R")" "active slurmctld;reconfigure ;active slurmd;"
contains "says so" "$OUT" "wireup removed from this controller node"

before=$(snapshot "$R")
: >"$R.daemons"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10 --uninstall
check "second uninstall succeeds" "$RC" 0
contains "second uninstall: nothing to do" "$OUT" "wireup is not installed on this controller node; nothing changed"
check "second uninstall changes nothing" "$(snapshot "$R")" "$before"
check "second uninstall calls no daemon" "$(daemon_calls "$R")" ""

# A configless compute node: files go, slurmd restarts once.
C=$WORK/compute
make_root "$C" configless
FAKE_ACTIVE=slurmd run_on_create "$C" 10.1.1.11
check "compute install succeeds" "$RC" 0
: >"$C.daemons"
FAKE_ACTIVE=slurmd run_on_create "$C" 10.1.1.11 --uninstall
echo "$OUT"
check "compute uninstall succeeds" "$RC" 0
check "compute: no wireup file left" "$(cd "$C" && find . -path ./var/log -prune -o -path '*wireup*' -print)" ""
check "compute: slurmd restarted" "$(daemon_calls "$C")" "active slurmd;restart slurmd;"
finish
