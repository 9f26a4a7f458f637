#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

enum class Mode {
  IfUnset,      // the user's own value wins
  Force,        // admin forceenv or an explicit user option
  PrependPath,  // colon list: add the directory in front unless present
};

struct EnvEntry {
  std::string name;
  std::string value;
  std::string reason;  // shown by --wireup-verbose and wireup-env
  Mode mode = Mode::IfUnset;
};

enum class Action { Set, KeptUser, Unchanged, Rejected };

struct Decision {
  std::string name;
  std::string value;  // the value the task ends up with
  std::string reason;
  Action action;
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Names wireup wrote, so a nested step does not mistake them for the user's.
inline constexpr const char* kInjectedVar = "WIREUP_INJECTED";

bool valid_env_name(std::string_view name);
bool valid_env_value(std::string_view value);  // no NUL, CR or LF

// Later entries for the same name replace earlier ones. The result ends with
// the WIREUP_INJECTED bookkeeping entry when anything was set.
std::vector<Decision> resolve_env(const std::vector<EnvEntry>& wanted,
                                  const EnvLookup& current);

const char* action_name(Action a);

}  // namespace wireup
