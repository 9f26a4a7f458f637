#!/usr/bin/env bash
# wireup's plugstack line comes after the container plugin (pyxis), whose
# task_init moves each task into the container and imports the image's
# environment with overwrite: install and update put the block after a pyxis
# line or an include that loads pyxis, say so, keep it there on a re-run, and
# the verification refuses a plugstack.conf where wireup comes first.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"
BEGIN_LINE="# BEGIN wireup: managed by the wireup lifecycle scripts; edit provisioning_parameters.json instead"
PYXIS_INCLUDE="include /opt/slurm/etc/plugstack.conf.d/pyxis.conf"

# line_of FILE PATTERN -> number of the first line matching PATTERN
line_of() { grep -n -m1 -e "$2" "$1" | cut -d: -f1; }

# base-config's layout: the pyxis include at the end; wireup appended after it.
R=$WORK/fresh
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "fresh: run succeeds" "$RC" 0
contains "fresh: says it follows pyxis" "$OUT" \
  "plugstack.conf: wireup's line follows the container plugin (pyxis) on line 2"
contains "fresh: verification checks the order" "$OUT" \
  "verified: spank_wireup.so (line 4) comes after the container plugin (line 2)"
check "fresh: pyxis include, then the block" "$(sed -n '2p;3p' "$ps")" "$PYXIS_INCLUDE
$BEGIN_LINE"

# An older install (or an admin) left wireup's block before the pyxis include:
# an update moves it right after the include and leaves every other line alone.
R=$WORK/before_include
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
printf '%s\n' "# SPANK plugins" "$BEGIN_LINE" "optional /usr/local/lib/slurm/spank_wireup.so default=off efa=auto" \
  "# END wireup" "$PYXIS_INCLUDE" "# site comment" >"$ps"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
echo "$OUT"
check "before include: run succeeds" "$RC" 0
contains "before include: move reported" "$OUT" "plugstack.conf: moving wireup's line after line 5, the container plugin (pyxis)"
check "before include: new order" "$(grep -v '^# END' "$ps" | sed 's/ default=.*//')" "# SPANK plugins
$PYXIS_INCLUDE
$BEGIN_LINE
optional /usr/local/lib/slurm/spank_wireup.so
# site comment"
check "before include: one block" "$(grep -c '^# BEGIN wireup' "$ps")" 1
before=$(snapshot "$R")
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "before include: second run succeeds" "$RC" 0
check "before include: second run changes no file" "$(snapshot "$R")" "$before"
contains "before include: second run up to date" "$OUT" "nothing changed"

# A pyxis line written directly into plugstack.conf, after the block.
R=$WORK/direct
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
printf '%s\n' "$BEGIN_LINE" "optional /usr/local/lib/slurm/spank_wireup.so default=off" "# END wireup" \
  "required /usr/local/lib/slurm/spank_pyxis.so runtime_path=/run/pyxis # containers" >"$ps"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "direct pyxis line: run succeeds" "$RC" 0
contains "direct pyxis line: move reported" "$OUT" "moving wireup's line after line 4"
check "direct pyxis line: pyxis first" "$(line_of "$ps" spank_pyxis.so) $(line_of "$ps" spank_wireup.so)" "1 3"

# A wildcard include of plugstack.conf.d whose files load pyxis counts as pyxis.
R=$WORK/wildcard
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
printf '%s\n' "$BEGIN_LINE" "optional /usr/local/lib/slurm/spank_wireup.so default=off" "# END wireup" \
  "include /opt/slurm/etc/plugstack.conf.d/*.conf" >"$ps"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "wildcard include: run succeeds" "$RC" 0
check "wildcard include: include first" "$(line_of "$ps" '^include') $(line_of "$ps" spank_wireup.so)" "1 3"

# No container plugin at all: the block stays where it is.
R=$WORK/plain
make_root "$R"
ps=$R/opt/slurm/etc/plugstack.conf
printf '%s\n' "$BEGIN_LINE" "optional /usr/local/lib/slurm/spank_wireup.so default=off" "# END wireup" \
  "# pyxis is not installed here" >"$ps"
FAKE_ACTIVE=slurmctld run_on_create "$R" 10.1.0.10
check "no container plugin: run succeeds" "$RC" 0
check "no container plugin: block kept first" "$(line_of "$ps" spank_wireup.so)" 2
lacks "no container plugin: nothing about pyxis" "$OUT" "container plugin"

# Something adds a pyxis line after wireup's while the daemons reload: the
# verification fails and the node goes back to where it was.
R=$WORK/late
make_root "$R"
printf '%s\n' "# SPANK plugins" >"$R/opt/slurm/etc/plugstack.conf"
before=$(snapshot "$R")
FAKE_APPEND_PLUGSTACK="required /usr/local/lib/slurm/spank_pyxis.so" FAKE_ACTIVE=slurmctld \
  run_on_create "$R" 10.1.0.10
echo "$OUT"
check "late pyxis line: run fails" "$RC" 1
contains "late pyxis line: order named" "$OUT" \
  "loads spank_wireup.so on line 3, before the container plugin (pyxis) on line 5; wireup must come after it"
contains "late pyxis line: rolled back" "$OUT" "back to its state before the run"
finish
