#!/bin/bash
# The PMIx exchange behind the NCCL bootstrap, on CPU: a 128-byte blob under
# mpirun (fake nodes), and through wireup-launch's exec mode, where the
# program inits PMIx again as the rank the launcher finalized. There the
# launcher's connection must stay open until the task exits (inherited=1):
# PMIx 4.2's server mishandles it closing mid-job and a fence hangs, about
# one run in twenty, so exec mode runs several times. $2 = pmix_blob_check.
. "$(dirname "$0")/lib.sh" "$@"
CHECK=${2:?pmix_blob_check binary}
mpirun_fake a:2,b:2 -np 4 "$CHECK" >"$TMP/m" 2>&1 || { cat "$TMP/m"; fail "mpirun blob"; }
file_count "m" "$TMP/m" '^BLOB rank=[0-3] size=4 ok refused_bad_root=1 inherited=0$' 4
for run in 1 2 3 4 5 6 7 8; do
  MPIRUN_TIMEOUT=30 mpirun_fake a:2,b:2 -np 4 "$WL" -- "$CHECK" >"$TMP/w" 2>&1 ||
    { cat "$TMP/w"; fail "blob under wireup-launch exec mode (run $run of 8)"; }
  file_count "w" "$TMP/w" '^BLOB rank=[0-3] size=4 ok refused_bad_root=1 inherited=1$' 4
done
if [ -n "${SLURM_CONF:-}" ] && [ "${3:-}" = srun ]; then
  for run in 1 2 3 4; do
    timeout 60 srun --mpi=pmix -N2 --ntasks-per-node=2 "$WL" -- "$CHECK" >"$TMP/s" 2>&1 ||
      { cat "$TMP/s"; fail "blob under srun (run $run of 4)"; }
    file_count "s" "$TMP/s" '^BLOB rank=[0-3] size=4 ok refused_bad_root=1 inherited=1$' 4
  done
fi
pass "128-byte blob through PMIx, exec mode's connection kept until exit"
