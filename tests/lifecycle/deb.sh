#!/usr/bin/env bash
# Installing from a .deb (the package cmake/WireupPackaging.cmake makes):
# named explicitly, or found beside the lifecycle scripts the way HyperPod
# lays out the S3 prefix (base-config's on_create.sh calling wireup/on_create.sh,
# provisioning_parameters.json and the package next to it).
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"

# make_deb VERSION: a package laid out like CPack's (prefix /usr/local).
make_deb() {
  local pkg=$WORK/pkg-$1
  mkdir -p "$pkg/DEBIAN" "$pkg/usr/local"
  cp -a "$WORK/prefix/." "$pkg/usr/local/"
  echo "$1" >"$pkg/usr/local/share/wireup/VERSION"
  printf '%s\n' "Package: wireup" "Version: $1" "Architecture: all" "Maintainer: wireup tests" \
    "Description: wireup test package" >"$pkg/DEBIAN/control"
  # Uncompressed: the plugin and wireup-env with their debug info (18 MB) took xz 7 s each.
  dpkg-deb -Znone --build --root-owner-group "$pkg" "$WORK/wireup_$1_all.deb" >/dev/null
}
make_deb 0.1.0

R=$WORK/node
make_root "$R"
RC=0
OUT=$(cd "$WORK" && WIREUP_NODE_IPS=10.1.0.10 WIREUP_LIFECYCLE_DAEMON_CMD="$TESTS/fake_daemons.sh" \
  FAKE_ROOT=$R FAKE_DAEMON_LOG=$R.daemons WIREUP_FROM_DEB=$WORK/wireup_0.1.0_all.deb \
  bash "$LIFECYCLE/on_create.sh" --root "$R" 2>&1) || RC=$?
echo "$OUT"
check "explicit .deb: run succeeds" "$RC" 0
contains "explicit .deb: named" "$OUT" "installing from package $WORK/wireup_0.1.0_all.deb"
cmp -s "$WIREUP_PLUGIN" "$R/usr/local/lib/slurm/spank_wireup.so" && pass "explicit .deb: plugin installed" ||
  fail "explicit .deb: plugin missing"
check "explicit .deb: version file" "$(cat "$R/usr/local/share/wireup/VERSION")" "0.1.0"

# The S3 prefix as HyperPod downloads it: no WIREUP_FROM_*, no config paths given.
S3=$WORK/s3
mkdir -p "$S3"
cp -a "$LIFECYCLE" "$S3/wireup"
make_deb 0.2.0
make_deb 0.10.0
cp "$WORK/wireup_0.2.0_all.deb" "$S3/"
cp "$WORK/wireup_0.10.0_all.deb" "$S3/wireup/"
cp "$LIFECYCLE/samples/provisioning_parameters.json" "$S3/"
rm "$R/opt/ml/config/provisioning_parameters.json"
RC=0
OUT=$(cd "$S3" && WIREUP_NODE_IPS=10.1.0.10 WIREUP_LIFECYCLE_DAEMON_CMD="$TESTS/fake_daemons.sh" \
  FAKE_ROOT=$R FAKE_DAEMON_LOG=$R.daemons bash wireup/on_create.sh --root "$R" 2>&1) || RC=$?
echo "$OUT"
check "S3 layout: run succeeds" "$RC" 0
contains "S3 layout: newest package found" "$OUT" "installing from package $S3/wireup/wireup_0.10.0_all.deb"
check "S3 layout: upgraded" "$(cat "$R/usr/local/share/wireup/VERSION")" "0.10.0"
contains "S3 layout: provisioning_parameters.json from the working directory" "$OUT" "role controller"

# Not a package.
echo "junk" >"$WORK/wireup_9.9.9_all.deb"
RC=0
OUT=$(cd "$WORK" && WIREUP_NODE_IPS=10.1.0.10 WIREUP_LIFECYCLE_DAEMON_CMD="$TESTS/fake_daemons.sh" \
  FAKE_ROOT=$R FAKE_DAEMON_LOG=$R.daemons WIREUP_FROM_DEB=$WORK/wireup_9.9.9_all.deb \
  WIREUP_PROVISIONING_PARAMETERS=s3/provisioning_parameters.json \
  bash "$LIFECYCLE/on_create.sh" --root "$R" 2>&1) || RC=$?
check "junk .deb: run fails" "$RC" 1
contains "junk .deb: reason" "$OUT" "wireup_9.9.9_all.deb: not a readable .deb"
finish
