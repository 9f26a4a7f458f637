#!/usr/bin/env bash
# Compute nodes on fake roots. Configless (no local slurm.conf): the files are
# installed, plugstack.conf is left to slurmctld, a running slurmd restarts
# once. With a local slurm.conf: the plugin is registered there too. A second
# run changes no file and restarts nothing.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"
C=$WORK/compute
make_root "$C" configless

FAKE_ACTIVE=slurmd run_on_create "$C" 10.1.1.12
echo "$OUT"
check "configless compute run succeeds" "$RC" 0
contains "compute role" "$OUT" "node worker-group-1-2 of group worker-group-1"
contains "says where plugstack.conf comes from" "$OUT" "configless node"
cmp -s "$WIREUP_PLUGIN" "$C/usr/local/lib/slurm/spank_wireup.so" && pass "plugin installed" || fail "plugin not installed"
[[ ! -e $C/opt/slurm/etc/plugstack.conf ]] && pass "no plugstack.conf written" || fail "plugstack.conf written on a configless node"
check "slurmd restarted once, no reconfigure from a compute node" "$(daemon_calls "$C")" "active slurmd;restart slurmd;"
contains "preflight ran the real srun" "$OUT" "preflight: this node's srun loads the new spank_wireup.so"

before=$(snapshot "$C")
: >"$C.daemons"
FAKE_ACTIVE=slurmd run_on_create "$C" 10.1.1.12
check "second run succeeds" "$RC" 0
check "second run changes no file" "$(snapshot "$C")" "$before"
check "second run restarts nothing" "$(daemon_calls "$C")" ""

# slurmd not running (e.g. before HyperPod starts it): nothing to restart.
C2=$WORK/compute-stopped
make_root "$C2" configless
run_on_create "$C2" 10.1.1.11
check "stopped slurmd: run succeeds" "$RC" 0
check "stopped slurmd: only asked" "$(daemon_calls "$C2")" "active slurmd;"

# A compute node with its own slurm.conf registers there as well.
C3=$WORK/compute-local-conf
make_root "$C3"
FAKE_ACTIVE=slurmd run_on_create "$C3" 10.1.1.11
echo "$OUT"
check "local-conf compute run succeeds" "$RC" 0
check "local-conf compute: one wireup line" "$(grep -c spank_wireup "$C3/opt/slurm/etc/plugstack.conf")" 1
check "local-conf compute: restart only" "$(daemon_calls "$C3")" "active slurmd;restart slurmd;"
contains "local-conf compute: verified" "$OUT" "verified: srun --help lists --wireup"

# A failing restart fails the run and puts the files back.
C4=$WORK/compute-restart-fails
make_root "$C4" configless
FAKE_ACTIVE=slurmd FAKE_FAIL=restart run_on_create "$C4" 10.1.1.11
echo "$OUT"
check "failed restart fails the run" "$RC" 1
contains "failed restart named" "$OUT" "'restart slurmd' failed"
[[ ! -e $C4/usr/local/lib/slurm/spank_wireup.so && ! -e $C4/var/lib/wireup/installed-files ]] &&
  pass "failed restart: files rolled back" || fail "failed restart left files behind"
finish
