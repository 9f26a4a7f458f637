#!/usr/bin/env bash
# Missing or malformed HyperPod configs, and admin arguments the plugin would
# reject: each run fails, names the file (or argument) and what was expected,
# and leaves the node exactly as it was.
source "$(dirname "$0")/lib.sh"
make_prefix "$WORK/prefix"
R=$WORK/node
make_root "$R"
cfg=$R/opt/ml/config
rc_json=$cfg/resource_config.json
pp_json=$cfg/provisioning_parameters.json
cp "$rc_json" "$WORK/rc.good"
cp "$pp_json" "$WORK/pp.good"

# expect_error DESCRIPTION MESSAGE [IP]: the run fails, says MESSAGE, changes nothing.
expect_error() {
  local before
  before=$(cd "$R" && find . -path ./var/log -prune -o -print | sort)
  run_on_create "$R" "${3:-10.1.0.10}"
  check "$1: exit status" "$RC" 1
  contains "$1: message" "$OUT" "$2"
  contains "$1: loud" "$OUT" "ERROR:"
  check "$1: nothing installed" "$(cd "$R" && find . -path ./var/log -prune -o -print | sort)" "$before"
  cp "$WORK/rc.good" "$rc_json"
  cp "$WORK/pp.good" "$pp_json"
}

rm "$rc_json"
expect_error "missing resource_config.json" "resource_config.json ($rc_json): file not found"

echo '{"InstanceGroups": [' >"$rc_json"
expect_error "truncated resource_config.json" "resource_config.json ($rc_json): not valid JSON"

echo '[]' >"$rc_json"
expect_error "resource_config.json not an object" "expected a JSON object at the top level"

echo '{"ClusterConfig": {}}' >"$rc_json"
expect_error "no InstanceGroups" "missing \"InstanceGroups\" (expected a list)"

echo '{"InstanceGroups": [{"Name": "g", "Instances": [{"InstanceName": "x"}]}]}' >"$rc_json"
expect_error "instance without CustomerIpAddress" "InstanceGroups[0].Instances[0]: missing \"CustomerIpAddress\""

expect_error "address not in resource_config.json" \
  "none of this node's addresses (172.31.9.9) is the CustomerIpAddress of an instance (groups: controller-machine, login-group, worker-group-1)" \
  172.31.9.9

rm "$pp_json"
expect_error "missing provisioning_parameters.json" "provisioning_parameters.json not found"

printf '{"controller_group": "controller-machine",}' >"$pp_json"
expect_error "malformed provisioning_parameters.json" "provisioning_parameters.json ($pp_json): not valid JSON"

echo '{"workload_manager": "slurm"}' >"$pp_json"
expect_error "no controller_group" "missing \"controller_group\" (expected a non-empty string)"

echo '{"controller_group": "controller-machine", "workload_manager": "eks"}' >"$pp_json"
expect_error "not slurm" "\"workload_manager\" is \"eks\""

echo '{"controller_group": "controller-machine", "wireup": {"defualt": "on"}}' >"$pp_json"
expect_error "unknown wireup key" "\"wireup\": unknown key \"defualt\""

echo '{"controller_group": "controller-machine", "wireup": {"nccl_socket_ifname": "eth0 eth1"}}' >"$pp_json"
expect_error "value with a space" "without spaces or '#'"

echo '{"controller_group": "controller-machine", "wireup": {"efa": "maybe"}}' >"$pp_json"
expect_error "value the plugin rejects" "plugstack arguments 'efa=maybe' rejected: efa: invalid value 'maybe'"

# The same checks apply to the step run by hand.
RC=0
OUT=$(bash "$LIFECYCLE/install_wireup.sh" --root "$R" --role nobody 2>&1) || RC=$?
check "bad --role: exit status" "$RC" 1
contains "bad --role: message" "$OUT" "must be controller, login or compute (got 'nobody')"
finish
