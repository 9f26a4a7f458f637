#!/usr/bin/env bash
# plugstack.conf edits stay configless-safe and never register the plugin
# twice: a hand-written wireup line is folded into the managed block, a file
# without a final newline or plugstack.conf missing altogether works, an
# include that registers wireup as well is refused with the file named, and
# nothing is ever written into plugstack.conf.d.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"

# A hand-made line (README's quick start) in the middle of the file.
R=$WORK/manual
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
printf '%s\n' "# SPANK plugins" "optional /usr/lib/slurm/spank_wireup.so default=on" \
  "include /opt/slurm/etc/plugstack.conf.d/pyxis.conf" >"$ps"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "manual line: run succeeds" "$RC" 0
contains "manual line: reported" "$OUT" "plugstack.conf line 2 loads spank_wireup.so outside the managed block; dropping it"
check "manual line: exactly one registration" "$(grep -c 'spank_wireup.so' "$ps")" 1
check "manual line: other lines kept in order" "$(grep -v -e '^# BEGIN' -e '^# END' -e spank_wireup "$ps")" \
  "$(printf '%s\n' "# SPANK plugins" "include /opt/slurm/etc/plugstack.conf.d/pyxis.conf")"

# The block stays where it is when the arguments change; nothing else moves.
echo "# a later admin comment" >>"$ps"
WIREUP_PLUGSTACK_ARGS="default=on efa=off" FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "new arguments: run succeeds" "$RC" 0
check "new arguments: block updated in place" "$(sed -n '3,5p' "$ps" | sed -n 2p)" \
  "optional /usr/local/lib/slurm/spank_wireup.so default=on efa=off"
check "new arguments: later lines still after it" "$(tail -n 1 "$ps")" "# a later admin comment"
check "new arguments: one block" "$(grep -c '^# BEGIN wireup' "$ps")" 1

# No final newline, and no plugstack.conf at all.
R=$WORK/nonl
make_root "$R"
printf '# no newline at the end' >"$R/opt/slurm/etc/plugstack.conf"
run_on_create "$R" 10.1.0.10
check "no final newline: run succeeds" "$RC" 0
check "no final newline: first line intact" "$(head -n 1 "$R/opt/slurm/etc/plugstack.conf")" "# no newline at the end"
R=$WORK/none
make_root "$R"
rm "$R/opt/slurm/etc/plugstack.conf"
run_on_create "$R" 10.1.0.10
check "no plugstack.conf: run succeeds" "$RC" 0
check "no plugstack.conf: created with the block only" "$(grep -c . "$R/opt/slurm/etc/plugstack.conf")" 3
check "no plugstack.conf: mode" "$(stat -c %a "$R/opt/slurm/etc/plugstack.conf")" 644

# PlugStackConfig in slurm.conf names the file to edit.
R=$WORK/custom
make_root "$R"
echo "PlugStackConfig=/opt/slurm/etc/spank.conf" >>"$R/opt/slurm/etc/slurm.conf"
cp "$R/opt/slurm/etc/plugstack.conf" "$R/opt/slurm/etc/spank.conf"
before=$(cat "$R/opt/slurm/etc/plugstack.conf")
WIREUP_NODE_ROLE=login run_on_create "$R" 10.1.0.10
echo "$OUT"
check "PlugStackConfig: run succeeds" "$RC" 0
check "PlugStackConfig: that file has the block" "$(grep -c spank_wireup "$R/opt/slurm/etc/spank.conf")" 1
check "PlugStackConfig: plugstack.conf untouched" "$(cat "$R/opt/slurm/etc/plugstack.conf")" "$before"
contains "PlugStackConfig: configless warning" "$OUT" "is not plugstack.conf beside slurm.conf"

# plugstack.conf as a symlink: the file it points to is edited, the link stays.
R=$WORK/link
make_root "$R"
mv "$R/opt/slurm/etc/plugstack.conf" "$R/opt/slurm/etc/plugstack.real"
ln -s plugstack.real "$R/opt/slurm/etc/plugstack.conf"
run_on_create "$R" 10.1.0.10
check "symlink: run succeeds" "$RC" 0
[[ -L $R/opt/slurm/etc/plugstack.conf ]] && pass "symlink: link kept" || fail "symlink: link replaced"
check "symlink: target has the block" "$(grep -c spank_wireup "$R/opt/slurm/etc/plugstack.real")" 1
before=$(snapshot "$R")
run_on_create "$R" 10.1.0.10
check "symlink: second run changes no file" "$(snapshot "$R")" "$before"

# An include that registers wireup too (e.g. plugstack.conf.d/*): refused, nothing changed.
R=$WORK/dup
make_root "$R"
printf '%s\n' "include /opt/slurm/etc/plugstack.conf.d/*" >"$R/opt/slurm/etc/plugstack.conf"
echo "required /usr/local/lib/slurm/spank_wireup.so" >"$R/opt/slurm/etc/plugstack.conf.d/wireup.conf"
before=$(snapshot "$R")
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "duplicate in an include: run fails" "$RC" 1
contains "duplicate in an include: file named" "$OUT" \
  "spank_wireup.so is also registered in /opt/slurm/etc/plugstack.conf.d/wireup.conf line 1 (included by /opt/slurm/etc/plugstack.conf line 1)"
contains "wildcard include: configless warning" "$OUT" "includes a wildcard"
check "duplicate in an include: node unchanged" "$(snapshot "$R")" "$before"
finish
