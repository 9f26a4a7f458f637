#!/usr/bin/env bash
# The install step against the real local Slurm cluster, as its controller:
# afterwards `srun --help` lists the plugin's options and a `--wireup` job
# gets its environment; a second run changes nothing and touches no daemon;
# the uninstall takes the options away again. Installed files go to a temp
# directory; the cluster's plugstack.conf is restored at the end.
source "$(dirname "$0")/lib.sh"
# shellcheck source=../lib/cluster_nodes.sh
source "$(dirname "$0")/../lib/cluster_nodes.sh"
# nodes_idle, at the end, waits up to 60 s for a node still completing a job.
: "${WIREUP_TEST_CLUSTER_DIR:?run through ctest}"
eval "$(bash "$WIREUP_TEST_CLUSTER_SCRIPT" env "$WIREUP_TEST_CLUSTER_DIR")"
CLUSTER=$WIREUP_TEST_CLUSTER_DIR
PS=$CLUSTER/plugstack.conf
restart_all() {
  local n
  for n in $(sinfo -h -N -o %N | sort -u); do
    bash "$WIREUP_TEST_CLUSTER_SCRIPT" restart-node "$CLUSTER" "$n" >/dev/null 2>&1 || echo "restart of $n failed" >&2
  done
}
# Other tests share the cluster: put back the plugstack line cluster_start wrote, and
# restart the slurmds so none keeps the plugin from the temp directory loaded.
trap 'bash "$WIREUP_TEST_CLUSTER_SCRIPT" plugstack "$CLUSTER" "optional $WIREUP_PLUGIN default=off"; restart_all; rm -rf "$WORK"' EXIT

make_prefix "$WORK/prefix"
mkdir -p "$WORK/config"
cp "$LIFECYCLE/samples/resource_config.json" "$WORK/config/"
python3 - "$LIFECYCLE/samples/provisioning_parameters.json" "$WORK/config/provisioning_parameters.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["wireup"] = {"default": "off", "efa": "off", "setenv": {"WIREUP_LIFECYCLE_TEST": "admin"}}
json.dump(p, open(sys.argv[2], "w"), indent=2)
PY
export WIREUP_SLURM_CONF=$CLUSTER/slurm.conf WIREUP_PLUGIN_DIR=$WORK/lib/slurm WIREUP_PREFIX=$WORK/usr \
  WIREUP_STATE_DIR=$WORK/state WIREUP_LOG_DIR=$WORK/log WIREUP_FROM_PREFIX=$WORK/prefix \
  WIREUP_NODE_IPS=10.1.0.10 SAGEMAKER_RESOURCE_CONFIG_PATH=$WORK/config/resource_config.json \
  WIREUP_PROVISIONING_PARAMETERS=$WORK/config/provisioning_parameters.json \
  WIREUP_LIFECYCLE_DAEMON_CMD=$TESTS/cluster_daemons.sh CLUSTER_DAEMON_LOG=$WORK/daemons
lifecycle() { RC=0; OUT=$(cd "$WORK" && bash "$LIFECYCLE/on_create.sh" "$@" 2>&1) || RC=$?; echo "$OUT"; }
calls() { grep -v '^srun-help' "$WORK/daemons" | tr '\n' ';' || true; }
line="optional $WORK/lib/slurm/spank_wireup.so default=off efa=off setenv=WIREUP_LIFECYCLE_TEST=admin"

lifecycle
check "install on the cluster succeeds" "$RC" 0
check "one registration, the cluster's own line folded in" "$(grep -c spank_wireup "$PS")" 1
check "the managed line" "$(grep spank_wireup "$PS")" "$line"
check "real daemons: scontrol reconfigure, every slurmd restarted" "$(calls)" \
  "active slurmctld;reconfigure ;active slurmd;restart slurmd;"
contains "verified through srun --help" "$OUT" "verified: srun --help lists --wireup"

help=$(srun --help 2>&1)
contains "srun --help lists --wireup" "$help" "--wireup=[on|off]"
contains "srun --help lists --wireup-efa" "$help" "--wireup-efa"
contains "srun --help lists --wireup-verbose" "$help" "--wireup-verbose"
out=$(timeout 60 srun -N2 -n4 --wireup bash -c \
  'echo "$SLURM_PROCID rank=${RANK-} ws=${WORLD_SIZE-} lr=${LOCAL_RANK-} addr=${MASTER_ADDR-} port=${MASTER_PORT-} t=${WIREUP_LIFECYCLE_TEST-}"' | sort)
echo "$out"
check "--wireup job: four wired tasks with the admin setenv" \
  "$(grep -cE '^[0-3] rank=[0-3] ws=4 lr=[0-3] addr=127\.0\.0\.[0-9]+ port=6[0-9]{4} t=admin$' <<<"$out")" 4
check "--wireup job: RANK is SLURM_PROCID" "$(awk '{ sub(/rank=/, "", $2); if ($1 != $2) print "bad" }' <<<"$out")" ""
out=$(timeout 30 srun -N1 -n1 bash -c 'echo "rank=${RANK-unset}"')
check "default=off: a job without --wireup is not wired" "$out" "rank=unset"
out=$(timeout 30 srun -N1 -n1 --wireup "$WORK/usr/bin/wireup-env" --plugstack "$PS" 2>&1)
contains "the installed wireup-env reads the managed line" "$out" "MASTER_PORT"
nodes_idle

sum=$(sha256sum <"$PS")
: >"$WORK/daemons"
lifecycle
check "second run succeeds" "$RC" 0
contains "second run: nothing changed" "$OUT" "nothing changed"
check "second run: plugstack.conf untouched" "$(sha256sum <"$PS")" "$sum"
check "second run: no daemon touched" "$(calls)" ""

: >"$WORK/daemons"
lifecycle --uninstall
check "uninstall succeeds" "$RC" 0
check "uninstall: no wireup line" "$(grep -c spank_wireup "$PS" || true)" 0
lacks "uninstall: srun --help has no --wireup" "$(srun --help 2>&1)" "--wireup"
[[ ! -e $WORK/lib/slurm/spank_wireup.so && ! -e $WORK/state ]] && pass "uninstall: files and state gone" ||
  fail "uninstall: files left"
check "uninstall: daemons reloaded" "$(calls)" "active slurmctld;reconfigure ;active slurmd;restart slurmd;"
out=$(timeout 30 srun -N1 -n1 true 2>&1) && pass "jobs still run after the uninstall" || fail "srun after uninstall: $out"
finish
