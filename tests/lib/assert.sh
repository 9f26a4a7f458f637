# shellcheck shell=bash
# The shell tests' assertions, sourced by every tests/*/lib.sh and by the
# scripts that need no other helper. A test records each check, then calls
# finish, which fails the test when any check failed:
#   pass DESCRIPTION                  a check that held
#   fail DESCRIPTION                  one that did not (with WIREUP_FAIL_FAST=1:
#                                     the test ends at once, for tests whose
#                                     later steps need the earlier ones)
#   check DESCRIPTION GOT EXPECTED    equal strings
#   contains DESCRIPTION TEXT PART    PART occurs in TEXT
#   lacks DESCRIPTION TEXT PART       PART does not occur in TEXT
#   file_contains DESCRIPTION FILE PART   PART occurs in FILE (shown when not)
#   file_count DESCRIPTION FILE REGEX N   N matches of the extended REGEX in
#                                     FILE, counted per match, not per line
#   close DESCRIPTION A B TOLERANCE   numbers A and B within TOLERANCE relative to B
#   far_apart PASS_TEXT FAIL_TEXT REF OTHER   more than 1e-3 relative apart
#   expect_error WHAT NEEDLE COMMAND...   COMMAND exits 2, NEEDLE on its stderr
#                                     (writers sharing a stream can share a
#                                     line); a leading ^ and trailing $ are
#                                     dropped for it
#   finish                            exit 1 if any check failed
FAILS=0
fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
  if [[ ${WIREUP_FAIL_FAST:-0} == 1 ]]; then exit 1; fi
}
pass() { echo "ok: $*"; }
check() { if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi; }
contains() { if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: '$3' not in: $2"; fi; }
lacks() { if [[ "$2" != *"$3"* ]]; then pass "$1"; else fail "$1: '$3' found in: $2"; fi; }
file_contains() {
  if grep -qF -- "$3" "$2"; then
    pass "$1"
  else
    echo "--- $2:" >&2
    cat "$2" >&2
    fail "$1: '$3' not in $2"
  fi
}
file_count() {
  local re=${3#^} n
  re=${re%\$}
  n=$(grep -oE -- "$re" "$2" | wc -l)
  if [[ $n -eq $4 ]]; then
    pass "$1"
  else
    echo "--- $2:" >&2
    cat "$2" >&2
    fail "$1: expected $4 matches of '$3' in $2, got $n"
  fi
}
finish() {
  if ((FAILS)); then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}

# close DESCRIPTION A B RELATIVE_TOLERANCE: |A-B| <= tol * |B|
close() {
  if awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
        exit !(a != "" && b != "" && d <= t * m) }'; then
    pass "$1 ($2 vs $3)"
  else
    fail "$1: $2 vs $3 (tolerance $4 relative)"
  fi
}

# far_apart PASS_TEXT FAIL_TEXT REF OTHER: OTHER differs from REF by more than 100 times a
# 1e-5 relative tolerance, so a check at that tolerance would see the difference.
far_apart() {
  if awk -v r="$3" -v w="$4" 'BEGIN { d = r - w; if (d < 0) d = -d; exit !(d > 100 * 1e-5 * r) }'; then
    pass "$1"
  else
    fail "$2"
  fi
}

# expect_error WHAT NEEDLE COMMAND...: COMMAND exits 2 and its stderr holds NEEDLE.
expect_error() {
  local what=$1 needle=$2 out rc
  shift 2
  out=$("$@" 2>&1 >/dev/null) && rc=0 || rc=$?
  if ((rc == 2)) && [[ $out == *"$needle"* ]]; then
    pass "$what"
  else
    fail "$what: exit $rc, wanted 2 and '$needle' in: $out"
  fi
}
