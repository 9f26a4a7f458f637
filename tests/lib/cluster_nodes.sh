# shellcheck shell=bash
# nodes_idle: the check every test on the shared local cluster ends with.
# Nodes must stay in service whatever a test did. A node still finishing the
# last job (completing, "comp"; or still allocated) gets up to 60 s to settle;
# drained or down never passes. Needs assert.sh's check and the cluster's
# SLURM_CONF in the environment.
nodes_idle() {
  local states
  for _ in $(seq 300); do
    states=$(sinfo -h -N -o '%t' | sort -u | tr '\n' ' ')
    [[ $states == *comp* || $states == *mix* || $states == *alloc* ]] || break
    sleep 0.2
  done
  check "nodes idle, none drained" "$states" "idle "
}
