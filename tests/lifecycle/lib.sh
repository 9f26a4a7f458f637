# shellcheck shell=bash
# shellcheck disable=SC2034 # OUT, RC, WORK are read by the test scripts
# Helpers for the lifecycle tests (sourced, not run). A fake HyperPod node is
# a directory tree: /opt/slurm/etc (slurm.conf, plugstack.conf and a pyxis
# include, as base-config leaves them), /opt/ml/config/*.json from
# lifecycle/samples, /var/log/provision. Daemon calls go to fake_daemons.sh.
# CTest provides WIREUP_PLUGIN (the built .so) and WIREUP_ENV_TOOL (wireup-env).
set -euo pipefail

: "${WIREUP_PLUGIN:?run through ctest}" "${WIREUP_ENV_TOOL:?}"
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIFECYCLE=$(cd "$TESTS/../../lifecycle" && pwd)
WORK=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/wireup-lifecycle.XXXXXX")")
trap 'rm -rf "$WORK"' EXIT

# shellcheck source=../lib/assert.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.sh"

# An install prefix as `cmake --install` lays it out, from the built files.
make_prefix() { # DIR
  mkdir -p "$1/lib/slurm" "$1/bin" "$1/share/wireup"
  cp "$WIREUP_PLUGIN" "$1/lib/slurm/spank_wireup.so"
  cp "$WIREUP_ENV_TOOL" "$1/bin/wireup-env"
  echo "wireup test prefix" >"$1/share/wireup/README"
  chmod 644 "$1/share/wireup/README"
}

# A fake node. With `configless`, there is no local slurm.conf (as on
# configless compute nodes, whose slurmd fetches it from slurmctld).
make_root() { # DIR [configless]
  local r=$1
  mkdir -p "$r/opt/slurm/etc/plugstack.conf.d" "$r/opt/ml/config" "$r/var/log/provision"
  cp "$LIFECYCLE/samples/resource_config.json" "$LIFECYCLE/samples/provisioning_parameters.json" \
    "$r/opt/ml/config/"
  [[ ${2:-} == configless ]] && return 0
  printf '%s\n' "ClusterName=ml-cluster" "SlurmctldHost=ip-10-1-0-10" \
    "SlurmctldParameters=enable_configless" "ProctrackType=proctrack/cgroup" >"$r/opt/slurm/etc/slurm.conf"
  printf '%s\n' "# SPANK plugins" "include /opt/slurm/etc/plugstack.conf.d/pyxis.conf" \
    >"$r/opt/slurm/etc/plugstack.conf"
  echo "required /usr/local/lib/slurm/spank_pyxis.so runtime_path=/run/pyxis" \
    >"$r/opt/slurm/etc/plugstack.conf.d/pyxis.conf"
}

# Every entry under a fake root with type, mode, link target, and for files
# mtime and content hash; the provisioning log (append-only by design) left out.
snapshot() { # DIR
  (cd "$1" && find . -path ./var/log/provision -prune -o -printf '%p %y %m %l\n' | sort &&
    find . -path ./var/log/provision -prune -o -type f -printf '%p %T@\n' | sort &&
    find . -path ./var/log/provision -prune -o -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# Runs on_create.sh on a fake root as the node with address IP; output in $OUT, status in $RC.
run_on_create() { # ROOT IP [ARGS...]
  local root=$1 ip=$2
  shift 2
  RC=0
  OUT=$(cd "$WORK" && WIREUP_NODE_IPS=$ip WIREUP_LIFECYCLE_DAEMON_CMD="$TESTS/fake_daemons.sh" \
    FAKE_ROOT=$root FAKE_DAEMON_LOG=$root.daemons WIREUP_FROM_PREFIX=${FROM_PREFIX:-$WORK/prefix} \
    bash "$LIFECYCLE/on_create.sh" --root "$root" "$@" 2>&1) || RC=$?
}

daemon_calls() { # ROOT -> the recorded daemon calls, minus srun-help
  grep -v '^srun-help' "$1.daemons" 2>/dev/null | tr '\n' ';' || true
}
