#!/usr/bin/env bash
# --dry-run prints each change it would make (files, the plugstack.conf diff,
# daemon calls) and changes nothing, not even the log; on an installed node
# it prints only what differs.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"
R=$WORK/node
make_root "$R"
rm -rf "$R/var/log/provision"
before=$(snapshot "$R")

FAKE_ACTIVE="slurmctld" run_on_create "$R" 10.1.0.10 --dry-run
echo "$OUT"
check "dry run succeeds" "$RC" 0
check "dry run changes nothing" "$(snapshot "$R")" "$before"
[[ ! -e $R/var/log/provision ]] && pass "dry run writes no log" || fail "dry run created the log directory"
contains "would install the plugin" "$OUT" "would write /usr/local/lib/slurm/spank_wireup.so"
contains "would install wireup-env" "$OUT" "would write /usr/local/bin/wireup-env"
contains "would change plugstack.conf" "$OUT" "would replace /opt/slurm/etc/plugstack.conf"
contains "shows the plugstack.conf diff" "$OUT" "+optional /usr/local/lib/slurm/spank_wireup.so default=off efa=auto"
contains "would reconfigure" "$OUT" "would run: reconfigure"
contains "would verify" "$OUT" "would check that srun --help lists --wireup"
contains "counts the changes" "$OUT" "dry run: 6 change(s) would be made"
check "dry run only asks the daemons" "$(daemon_calls "$R")" "active slurmctld;active slurmd;"

# Installed, then a dry run with other admin arguments: only the plugstack line would change.
FAKE_ACTIVE="slurmctld" run_on_create "$R" 10.1.0.10
check "install succeeds" "$RC" 0
before=$(snapshot "$R")
: >"$R.daemons"
FAKE_ACTIVE="slurmctld" WIREUP_PLUGSTACK_ARGS="default=on efa=off" run_on_create "$R" 10.1.0.10 --dry-run
echo "$OUT"
check "second dry run succeeds" "$RC" 0
check "second dry run changes nothing" "$(snapshot "$R")" "$before"
contains "diff: old line out" "$OUT" "-optional /usr/local/lib/slurm/spank_wireup.so default=off efa=auto nccl_socket_ifname"
contains "diff: new line in" "$OUT" "+optional /usr/local/lib/slurm/spank_wireup.so default=on efa=off"
lacks "no file would be installed again" "$OUT" "would write /usr/local"
lacks "no binary would be replaced" "$OUT" "would replace /usr/local"
check "two changes: backup and plugstack.conf" "$(grep -c 'would replace' <<<"$OUT")" 2

# Uninstall dry run.
FAKE_ACTIVE="slurmctld" run_on_create "$R" 10.1.0.10 --dry-run --uninstall
echo "$OUT"
check "uninstall dry run succeeds" "$RC" 0
check "uninstall dry run changes nothing" "$(snapshot "$R")" "$before"
contains "would remove the plugin" "$OUT" "would remove /usr/local/lib/slurm/spank_wireup.so"
contains "would drop the block" "$OUT" "-# BEGIN wireup"
finish
