#include "spank_calls.hpp"

#include <cstring>
#include <vector>

namespace wireup::spank {

std::optional<std::string> get_env(spank_t sp, const char* name) {
  std::vector<char> buf(4096);
  for (int attempt = 0; attempt < 6; ++attempt) {
    const spank_err_t rc = spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc == ESPANK_ENV_NOEXIST) return std::nullopt;
    if (rc != ESPANK_NOSPACE) {
      slurm_error("spank_wireup: spank_getenv(%s): %s", name, spank_strerror(rc));
      return std::nullopt;
    }
    buf.resize(buf.size() * 4);  // PATH-like values can be long
  }
  slurm_error("spank_wireup: spank_getenv(%s): value too long", name);
  return std::nullopt;
}

bool set_env(spank_t sp, const std::string& name, const std::string& value) {
  const spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), 1);
  if (rc != ESPANK_SUCCESS) {
    slurm_error("spank_wireup: spank_setenv(%s): %s", name.c_str(), spank_strerror(rc));
    return false;
  }
  return true;
}

std::optional<std::uint32_t> get_u32(spank_t sp, spank_item_t item, const char* what) {
  std::uint32_t v = 0;
  const spank_err_t rc = spank_get_item(sp, item, &v);
  if (rc != ESPANK_SUCCESS) {
    slurm_error("spank_wireup: spank_get_item(%s): %s", what, spank_strerror(rc));
    return std::nullopt;
  }
  return v;
}

std::optional<int> get_int(spank_t sp, spank_item_t item, const char* what) {
  int v = 0;
  const spank_err_t rc = spank_get_item(sp, item, &v);
  if (rc != ESPANK_SUCCESS) {
    slurm_error("spank_wireup: spank_get_item(%s): %s", what, spank_strerror(rc));
    return std::nullopt;
  }
  return v;
}

std::optional<std::map<std::string, std::string>> get_job_env(spank_t sp) {
  char** env = nullptr;
  const spank_err_t rc = spank_get_item(sp, S_JOB_ENV, &env);
  if (rc != ESPANK_SUCCESS || env == nullptr) {
    slurm_error("spank_wireup: spank_get_item(S_JOB_ENV): %s", spank_strerror(rc));
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (; *env != nullptr; ++env) {
    if (const char* eq = std::strchr(*env, '='))
      out.emplace(std::string(*env, static_cast<std::size_t>(eq - *env)), eq + 1);
  }
  return out;
}

}  // namespace wireup::spank
