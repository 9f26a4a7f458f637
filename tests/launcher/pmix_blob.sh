#!/bin/bash
# The PMIx exchange behind the NCCL bootstrap, on CPU: a 128-byte blob under
# mpirun (fake nodes), and through wireup-launch's exec mode (the program
# re-inits PMIx after the launcher finalized). $2 = pmix_blob_check.
. "$(dirname "$0")/lib.sh" "$@"
CHECK=${2:?pmix_blob_check binary}
mpirun_fake a:2,b:2 -np 4 "$CHECK" >"$TMP/m" 2>&1 || { cat "$TMP/m"; fail "mpirun blob"; }
expect_count "$TMP/m" '^BLOB rank=[0-3] size=4 ok refused_bad_root=1$' 4
mpirun_fake a:2,b:2 -np 4 "$WL" -- "$CHECK" >"$TMP/w" 2>&1 ||
  { cat "$TMP/w"; fail "blob under wireup-launch exec mode"; }
expect_count "$TMP/w" '^BLOB rank=[0-3] size=4 ok' 4
if [ -n "${SLURM_CONF:-}" ] && [ "${3:-}" = srun ]; then
  timeout 60 srun --mpi=pmix -N2 --ntasks-per-node=2 "$WL" -- "$CHECK" >"$TMP/s" 2>&1 ||
    { cat "$TMP/s"; fail "blob under srun"; }
  expect_count "$TMP/s" '^BLOB rank=[0-3] size=4 ok' 4
fi
pass "128-byte blob through PMIx"
