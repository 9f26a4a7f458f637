#!/bin/sh
# mpirun's rsh agent for fake nodes: drop the ssh options and host, run locally.
# Each fake node gets its own session directory: orteds of one host share
# /tmp/ompi.HOST.UID otherwise and race on creating it (PRRTE's prted reads
# PRTE_MCA_prte_tmpdir_base, Open MPI 4's orted OMPI_MCA_orte_tmpdir_base).
# Open MPI 4 names a node by the host it launched orted for; Open MPI 5 (PRRTE)
# by what its prted's gethostname() says, which would make every fake node this
# machine's name (PMIX_HOSTNAME, the failure report's host, PMIx's node lookups).
# So a prted runs in its own UTS namespace whose host name is the fake node's.
while [ $# -gt 0 ]; do
  case "$1" in
    -x|-T|-n|-q) shift ;;
    -o|-p|-l) shift 2 ;;
    -*) shift ;;
    *) host=$1; shift; break ;;
  esac
done
dir=$(mktemp -d "/tmp/wireup-fake-node-$host.XXXXXX")
export OMPI_MCA_orte_tmpdir_base="$dir" PRTE_MCA_prte_tmpdir_base="$dir"
case "$*" in
  *prted*)
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --uts /bin/sh -c 'hostname "$1" && exec /bin/sh -c "$2"' fake-node "$host" "$*" ;;
  *) /bin/sh -c "$*" ;;
esac
rc=$?
rm -rf "$dir"
exit $rc
