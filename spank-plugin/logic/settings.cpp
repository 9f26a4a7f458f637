#include "wireup/settings.hpp"

#include <cstring>
#include <map>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

// A value as messages show it: quoted, and cut short when long, so a 100 KB
// option value is not echoed back whole.
std::string shown(std::string_view v) {
  if (v.size() <= kShownValueMax) return quoted(v);
  return quoted(v.substr(0, kShownValueMax)) + "... (" + std::to_string(v.size()) + " bytes)";
}

[[noreturn]] void bad(std::string_view what, std::string_view value, std::string_view expected) {
  if (value.empty())
    throw InputError(std::string(what) + ": empty value (expected " + std::string(expected) + ")");
  throw InputError(std::string(what) + ": invalid value " + shown(value) + " (expected " +
                   std::string(expected) + ")");
}

std::optional<bool> on_off_word(std::string_view v) {
  const auto s = to_lower(v);
  if (s == "on" || s == "yes" || s == "true" || s == "1") return true;
  if (s == "off" || s == "no" || s == "false" || s == "0") return false;
  return std::nullopt;
}

std::optional<EfaMode> efa_word(std::string_view v) {
  const auto s = to_lower(v);
  if (s == "auto") return EfaMode::Auto;
  if (s == "on") return EfaMode::On;
  if (s == "off") return EfaMode::Off;
  return std::nullopt;
}

// NCCL_DEBUG levels NCCL understands, plus "off" to leave it unset.
std::optional<std::string> nccl_debug_word(std::string_view v) {
  const auto s = to_upper(v);
  if (s == "VERSION" || s == "WARN" || s == "INFO" || s == "TRACE") return s;
  if (s == "OFF") return std::string();
  return std::nullopt;
}

bool ifname_ok(std::string_view v) {
  if (v.empty() || v.size() > 256) return false;
  for (char c : v) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '^' || c == '=' || c == ',' || c == '.' || c == '_' || c == '-' ||
                    c == ':';
    if (!ok) return false;
  }
  return true;
}

// memory_snapshot_dirs=: "off", or up to 8 absolute paths joined by ','.
std::vector<std::string> parse_snapshot_dirs(std::string_view key, std::string_view v) {
  constexpr const char* expected = "off, or up to 8 absolute directories joined by ','";
  if (to_lower(v) == "off") return {};
  std::vector<std::string> dirs = split(v, ',');
  if (dirs.empty() || dirs.size() > 8) bad(key, v, expected);
  for (const std::string& d : dirs)
    if (d.empty() || d[0] != '/' || !valid_env_value(d)) bad(key, v, expected);
  return dirs;
}

// memory_snapshot_max_*=: a count from `min` to `max`.
std::uint64_t parse_limit(std::string_view key, std::string_view v, std::uint64_t min,
                          std::uint64_t max) {
  const auto n = parse_uint(v, max);
  if (!n || *n < min)
    bad(key, v, "a whole number " + std::to_string(min) + ".." + std::to_string(max));
  return *n;
}

EnvEntry parse_env_assignment(std::string_view key, std::string_view v, Mode mode) {
  const auto eq = v.find('=');
  const std::string name(v.substr(0, eq));
  if (eq == std::string_view::npos || !valid_env_name(name))
    bad(key, v, "NAME=VALUE with NAME made of letters, digits and _");
  const std::string value(v.substr(eq + 1));
  if (!valid_env_value(value)) bad(key, v, "a value without newline or NUL");
  return {name, value, std::string("plugstack.conf ") + std::string(key), mode};
}

}  // namespace

std::string admin_args_help() {
  return "default=on|off efa=auto|on|off port_base=1024..65535 port_range=N "
         "nccl_socket_ifname=LIST nccl_debug=VERSION|WARN|INFO|TRACE|off "
         "omp_num_threads=on|off setenv=NAME=VALUE forceenv=NAME=VALUE sysroot=PATH "
         "ofi_nccl_prefix=PATH memory_snapshot_dirs=PATH[,PATH...]|off "
         "memory_snapshot_max_entries=N "
         "memory_snapshot_max_name_bytes=N memory_snapshot_max_seconds=N";
}

AdminConfig parse_admin_args(const std::vector<std::string>& args) {
  AdminConfig cfg;
  std::map<std::string, std::string> seen;  // key (NAME for setenv/forceenv) -> value
  for (const auto& arg : args) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("plugstack.conf argument " + shown(arg) +
                       ": expected key=value, one of: " + admin_args_help());
    const std::string key = arg.substr(0, eq);
    const std::string v = arg.substr(eq + 1);
    const bool env_key = key == "setenv" || key == "forceenv";
    const std::string id = env_key ? "setenv/forceenv " + v.substr(0, v.find('=')) : key;
    if (const auto prev = seen.find(id); prev != seen.end())
      cfg.warnings.push_back("plugstack.conf argument " + shown(id) + " given twice (" +
                             shown(prev->second) + ", then " + shown(v) +
                             "): the last one is used");
    seen[id] = v;
    if (key == "default") {
      const auto b = on_off_word(v);
      if (!b) bad(key, v, "on or off");
      cfg.default_on = *b;
    } else if (key == "efa") {
      const auto m = efa_word(v);
      if (!m) bad(key, v, "auto, on or off");
      cfg.efa = *m;
    } else if (key == "port_base") {
      const auto n = parse_uint(v, 65535);
      if (!n || *n < 1024) bad(key, v, "a port number 1024..65535");
      cfg.ports.base = static_cast<std::uint32_t>(*n);
    } else if (key == "port_range") {
      const auto n = parse_uint(v, 64512);
      if (!n || *n == 0) bad(key, v, "a count 1..64512");
      cfg.ports.range = static_cast<std::uint32_t>(*n);
    } else if (key == "nccl_socket_ifname") {
      if (!ifname_ok(v)) bad(key, v, "an interface list such as ^docker,lo,veth or ens");
      cfg.nccl_socket_ifname = v;
    } else if (key == "nccl_debug") {
      const auto d = nccl_debug_word(v);
      if (!d) bad(key, v, "VERSION, WARN, INFO, TRACE or off");
      cfg.nccl_debug = *d;
    } else if (key == "omp_num_threads") {
      const auto b = on_off_word(v);
      if (!b) bad(key, v, "on or off");
      cfg.omp_threads = *b;
    } else if (key == "setenv") {
      cfg.extra.push_back(parse_env_assignment(key, v, Mode::IfUnset));
    } else if (key == "forceenv") {
      cfg.extra.push_back(parse_env_assignment(key, v, Mode::Force));
    } else if (key == "sysroot") {
      if (v.empty() || v[0] != '/' || !valid_env_value(v)) bad(key, v, "an absolute path");
      cfg.sysroot = v;
    } else if (key == "ofi_nccl_prefix") {
      if (v.empty() || v[0] != '/' || !valid_env_value(v)) bad(key, v, "an absolute path");
      cfg.ofi_nccl_prefix = v;
    } else if (key == "memory_snapshot_dirs") {
      cfg.memory_snapshot_dirs = parse_snapshot_dirs(key, v);
    } else if (key == "memory_snapshot_max_entries") {
      cfg.memory_snapshot_limits.entries = parse_limit(key, v, 1, 1000000000);
    } else if (key == "memory_snapshot_max_name_bytes") {
      cfg.memory_snapshot_limits.name_bytes = parse_limit(key, v, 4096, 1u << 30);
    } else if (key == "memory_snapshot_max_seconds") {
      cfg.memory_snapshot_limits.seconds = parse_limit(key, v, 1, 3600);
    } else {
      throw InputError("plugstack.conf argument " + shown(arg) + ": unknown key " + shown(key) +
                       " (known: " + admin_args_help() + ")");
    }
  }
  return cfg;
}

const char* option_value(const char* arg, bool remote) {
  if (arg == nullptr || std::strcmp(arg, "(null)") == 0) return nullptr;
  if (remote && *arg == '\0') return nullptr;
  return arg;
}

bool parse_on_off(std::string_view option, const char* value, bool bare_means) {
  if (value == nullptr) return bare_means;
  if (*value == '\0')
    throw InputError(std::string(option) + "=: empty value (expected on or off, or " +
                     std::string(option) + " alone for " + (bare_means ? "on" : "off") + ")");
  const auto b = on_off_word(value);
  if (!b) bad(option, value, "on or off");
  return *b;
}

EfaMode parse_efa_mode(std::string_view option, const char* value) {
  const auto m = efa_word(value ? value : "");
  if (!m) bad(option, value ? value : "", "auto, on or off");
  return *m;
}

std::string parse_nccl_debug(std::string_view option, const char* value) {
  const auto d = nccl_debug_word(value ? value : "");
  if (!d) bad(option, value ? value : "", "VERSION, WARN, INFO, TRACE or off");
  return *d;
}

bool wireup_enabled(const AdminConfig& admin, const UserOptions& user) {
  if (user.wireup) return *user.wireup;
  if (user.efa || user.nccl_debug || user.verbose) return true;
  return admin.default_on;
}

const char* efa_mode_name(EfaMode m) {
  switch (m) {
    case EfaMode::Auto:
      return "auto";
    case EfaMode::On:
      return "on";
    case EfaMode::Off:
      return "off";
  }
  return "?";
}

}  // namespace wireup
