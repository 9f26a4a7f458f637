#!/usr/bin/env bash
# Controller and login nodes on fake roots: the plugin and tools land where
# they belong, plugstack.conf gets exactly one managed block, the controller
# reconfigures slurmctld, and a second run changes no file and calls no daemon.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"
R=$WORK/controller
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf

FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "first run succeeds" "$RC" 0
contains "role from resource_config.json" "$OUT" "role controller"
cmp -s "$WIREUP_PLUGIN" "$R/usr/local/lib/slurm/spank_wireup.so" && pass "plugin installed" || fail "plugin not installed"
check "plugin mode" "$(stat -c %a "$R/usr/local/lib/slurm/spank_wireup.so")" 755
[[ -x $R/usr/local/bin/wireup-env ]] && pass "wireup-env installed" || fail "wireup-env missing"
check "one wireup line" "$(grep -c spank_wireup "$ps")" 1
check "the line, with admin defaults from provisioning_parameters.json" \
  "$(grep spank_wireup "$ps")" \
  "optional /usr/local/lib/slurm/spank_wireup.so default=off efa=auto nccl_socket_ifname=^docker,lo,veth setenv=NCCL_DEBUG_SUBSYS=INIT"
check "block markers" "$(grep -c -e '^# BEGIN wireup' -e '^# END wireup' "$ps")" 2
check "admin's lines kept in front" "$(head -n 2 "$ps")" \
  "$(printf '%s\n' "# SPANK plugins" "include /opt/slurm/etc/plugstack.conf.d/pyxis.conf")"
check "nothing new in plugstack.conf.d" "$(ls "$R/opt/slurm/etc/plugstack.conf.d")" "pyxis.conf"
check "no temp files left beside plugstack.conf" "$(find "$R/opt/slurm/etc" "$R/usr/local" -name '.wireup-new*' | wc -l)" 0
check "backup of the old plugstack.conf outside plugstack.conf.d" \
  "$(cat "$R/var/lib/wireup/plugstack.conf.previous")" "$(printf '%s\n' "# SPANK plugins" "include /opt/slurm/etc/plugstack.conf.d/pyxis.conf")"
check "daemons: reconfigure because slurmctld runs; no slurmd here" "$(daemon_calls "$R")" \
  "active slurmctld;reconfigure ;active slurmd;"
contains "verified with srun --help" "$OUT" "verified: srun --help lists --wireup"
contains "logged to /var/log/provision" "$(cat "$R/var/log/provision/provisioning.log")" "wireup installed on this controller node"
contains "configless warning about pyxis' path include" "$OUT" "includes /opt/slurm/etc/plugstack.conf.d/pyxis.conf by path"

before=$(snapshot "$R")
: >"$R.daemons"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "second run succeeds" "$RC" 0
contains "second run says so" "$OUT" "nothing changed"
check "second run changes no file" "$(snapshot "$R")" "$before"
check "second run calls no daemon" "$(daemon_calls "$R")" ""
check "still one wireup line" "$(grep -c spank_wireup "$ps")" 1
check "log appended, not replaced" "$(grep -c 'wireup lifecycle done' "$R/var/log/provision/provisioning.log")" 2

# A login node registers in its own plugstack.conf, but only the controller reconfigures.
L=$WORK/login
make_root "$L"
run_on_create "$L" "192.168.1.1 10.1.0.20"
check "login run succeeds" "$RC" 0
contains "login role" "$OUT" "role login"
check "login: one wireup line" "$(grep -c spank_wireup "$L/opt/slurm/etc/plugstack.conf")" 1
check "login: no reconfigure, slurmd not running" "$(daemon_calls "$L")" "active slurmd;"

# An upgrade replaces changed files and removes the ones the new version no longer ships.
cp -a "$WORK/prefix" "$WORK/prefix2"
rm "$WORK/prefix2/share/wireup/README"
echo "v2" >"$WORK/prefix2/share/wireup/NOTES"
: >"$R.daemons"
FROM_PREFIX=$WORK/prefix2 FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "upgrade succeeds" "$RC" 0
[[ ! -e $R/usr/local/share/wireup/README && -f $R/usr/local/share/wireup/NOTES ]] &&
  pass "upgrade: stale file removed, new one added" || fail "upgrade did not sync share/wireup"
check "upgrade: manifest lists the new set" "$(cat "$R/var/lib/wireup/installed-files")" \
  "$(printf '%s\n' /usr/local/bin/wireup-env /usr/local/lib/slurm/spank_wireup.so /usr/local/share/wireup/NOTES)"
check "upgrade without plugstack change: only the files changed, slurmd would restart if running" \
  "$(daemon_calls "$R")" "active slurmd;"
finish
