#!/bin/sh
# mpirun's rsh agent for fake nodes: drop the ssh options and host, run locally.
# Each fake node gets its own session directory: orteds of one host share
# /tmp/ompi.HOST.UID otherwise and race on creating it (PRRTE's prted reads
# PRTE_MCA_prte_tmpdir_base, Open MPI 4's orted OMPI_MCA_orte_tmpdir_base).
while [ $# -gt 0 ]; do
  case "$1" in
    -x|-T|-n|-q) shift ;;
    -o|-p|-l) shift 2 ;;
    -*) shift ;;
    *) host=$1; shift; break ;;
  esac
done
dir=$(mktemp -d "/tmp/wireup-fake-node-$host.XXXXXX")
OMPI_MCA_orte_tmpdir_base=$dir PRTE_MCA_prte_tmpdir_base=$dir /bin/sh -c "$*"
rc=$?
rm -rf "$dir"
exit $rc
