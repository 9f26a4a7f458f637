#!/usr/bin/env python3
"""Reads HyperPod's resource_config.json and provisioning_parameters.json and
prints this node's facts as shell assignments (for `eval` in on_create.sh):

  NODE_ROLE=controller|login|compute  NODE_GROUP=...  NODE_INSTANCE=...
  CLUSTER_NAME=...  PLUGSTACK_ARGS='default=off efa=auto'

Any missing file, malformed JSON or wrong shape is reported with the file's
path and what was expected, and the exit status is 1: a node must never be
provisioned from a config we only half understood.
"""
import argparse
import json
import re
import shlex
import sys

# Admin arguments spank_wireup.so accepts (docs/spank-plugin.md). Checked here
# too, so a typo fails the lifecycle run instead of disabling wireup on every node.
ADMIN_KEYS = ("default", "efa", "port_base", "port_range", "nccl_socket_ifname",
              "nccl_debug", "omp_num_threads", "setenv", "forceenv", "sysroot")
REPEATED_KEYS = ("setenv", "forceenv")
DEFAULT_ARGS = "default=off efa=auto"


class ConfigError(Exception):
    pass


def load(label, path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ConfigError(f"{label} ({path}): file not found")
    except OSError as e:
        raise ConfigError(f"{label} ({path}): cannot read: {e.strerror}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{label} ({path}): not valid JSON: {e}")
    if not isinstance(data, dict):
        raise ConfigError(f"{label} ({path}): expected a JSON object at the top level")
    return data


KIND_TEXT = {str: "a non-empty string", list: "a list", dict: "an object"}


def need(obj, key, kind, where):
    if key not in obj:
        raise ConfigError(f"{where}: missing \"{key}\" (expected {KIND_TEXT[kind]})")
    value = obj[key]
    if not isinstance(value, kind) or (kind is str and not value):
        raise ConfigError(f"{where}: \"{key}\" must be {KIND_TEXT[kind]}, got {json.dumps(value)}")
    return value


def find_node(rc, rc_path, node_ips):
    where = f"resource_config.json ({rc_path})"
    groups = need(rc, "InstanceGroups", list, where)
    for gi, group in enumerate(groups):
        gwhere = f"{where}: InstanceGroups[{gi}]"
        if not isinstance(group, dict):
            raise ConfigError(f"{gwhere}: expected an object")
        name = need(group, "Name", str, gwhere)
        for ii, inst in enumerate(need(group, "Instances", list, gwhere)):
            iwhere = f"{gwhere}.Instances[{ii}]"
            if not isinstance(inst, dict):
                raise ConfigError(f"{iwhere}: expected an object")
            ip = need(inst, "CustomerIpAddress", str, iwhere)
            if ip in node_ips:
                return name, inst.get("InstanceName") or inst.get("InstanceId") or ip
    names = ", ".join(g.get("Name", "?") for g in groups if isinstance(g, dict)) or "none"
    raise ConfigError(f"{where}: none of this node's addresses ({' '.join(node_ips) or 'none found'}) "
                      f"is the CustomerIpAddress of an instance (groups: {names}); "
                      "set WIREUP_NODE_IPS if the address detection is wrong")


def word(value, where):
    """One plugstack.conf word: Slurm splits the line on whitespace."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (int, str)) and not isinstance(value, float):
        text = str(value)
        if text and not re.search(r"[\s#]", text):
            return text
    raise ConfigError(f"{where}: {json.dumps(value)} must be a non-empty string or number "
                      "without spaces or '#' (it goes on the plugstack.conf line)")


def admin_args(pp, pp_path):
    where = f"provisioning_parameters.json ({pp_path}): \"wireup\""
    if "wireup" not in pp:
        return DEFAULT_ARGS
    settings = pp["wireup"]
    if not isinstance(settings, dict):
        raise ConfigError(f"{where} must be an object such as {{\"default\": \"off\", \"efa\": \"auto\"}}")
    words = []
    for key, value in settings.items():
        if key not in ADMIN_KEYS:
            raise ConfigError(f"{where}: unknown key \"{key}\" (known: {', '.join(ADMIN_KEYS)})")
        if key in REPEATED_KEYS:
            # {"NAME": "VALUE"} or ["NAME=VALUE", ...]
            pairs = value.items() if isinstance(value, dict) else None
            if pairs is None:
                if not isinstance(value, list):
                    raise ConfigError(f"{where}.{key} must be an object {{\"NAME\": \"VALUE\"}} "
                                      "or a list [\"NAME=VALUE\"]")
                pairs = [(None, v) for v in value]
            for name, v in pairs:
                item = word(v, f"{where}.{key}") if name is None else f"{name}={word(v, f'{where}.{key}.{name}')}"
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", item):
                    raise ConfigError(f"{where}.{key}: \"{item}\" is not NAME=VALUE")
                words.append(f"{key}={item}")
        else:
            words.append(f"{key}={word(value, f'{where}.{key}')}")
    return " ".join(words) or DEFAULT_ARGS


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resource-config", required=True)
    ap.add_argument("--provisioning-parameters", required=True)
    ap.add_argument("--node-ips", default="", help="this node's addresses, space or comma separated")
    args = ap.parse_args()
    try:
        rc = load("resource_config.json", args.resource_config)
        pp = load("provisioning_parameters.json", args.provisioning_parameters)
        pwhere = f"provisioning_parameters.json ({args.provisioning_parameters})"
        controller = need(pp, "controller_group", str, pwhere)
        login = pp.get("login_group")
        if login is not None and not isinstance(login, str):
            raise ConfigError(f"{pwhere}: \"login_group\" must be a string, got {json.dumps(login)}")
        manager = pp.get("workload_manager", "slurm")
        if manager != "slurm":
            raise ConfigError(f"{pwhere}: \"workload_manager\" is {json.dumps(manager)}; "
                              "wireup is a Slurm plugin and needs \"slurm\"")
        ips = [ip for ip in re.split(r"[\s,]+", args.node_ips) if ip]
        group, instance = find_node(rc, args.resource_config, ips)
        role = "controller" if group == controller else "login" if login and group == login else "compute"
        cluster = rc.get("ClusterConfig", {}).get("ClusterName", "") if isinstance(rc.get("ClusterConfig"), dict) else ""
        plugstack = admin_args(pp, args.provisioning_parameters)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for key, value in (("NODE_ROLE", role), ("NODE_GROUP", group), ("NODE_INSTANCE", instance),
                       ("CLUSTER_NAME", cluster), ("PLUGSTACK_ARGS", plugstack)):
        print(f"{key}={shlex.quote(str(value))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
