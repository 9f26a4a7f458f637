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

// Who wants a value or put one there, as --wireup-verbose names it.
inline constexpr const char* kByWireup = "wireup";
inline constexpr const char* kByAdmin = "admin";
inline constexpr const char* kByUser = "user";
inline constexpr const char* kByContainer = "image or hook";

struct EnvEntry {
  std::string name;
  std::string value;
  std::string reason;  // shown by --wireup-verbose and wireup-env
  Mode mode = Mode::IfUnset;
  std::string source = kByWireup;  // kByWireup, kByAdmin or kByUser
  // A rendezvous variable: wireup's value replaces one a container image or
  // hook put there (only the user's own value is kept).
  bool rendezvous = false;
};

enum class Action { Set, KeptUser, Unchanged, Rejected, KeptContainer };

struct Decision {
  std::string name;
  std::string value;  // the value the task ends up with
  std::string reason;
  Action action;
  std::string source = {};  // whose value the task ends up with (kBy*), "" if refused
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Names wireup wrote, so a nested step does not mistake them for the user's.
inline constexpr const char* kInjectedVar = "WIREUP_INJECTED";
// Names whose value wireup kept as a container image's or hook's, so that a
// dry run inside the task (wireup-env) tells them from the user's.
inline constexpr const char* kImageVar = "WIREUP_IMAGE_VARS";

bool valid_env_name(std::string_view name);
bool valid_env_value(std::string_view value);  // no NUL, CR or LF

// Later entries for the same name replace earlier ones. The result ends with
// the WIREUP_IMAGE_VARS bookkeeping entry when a container's value was kept,
// then the WIREUP_INJECTED one when anything was set.
std::vector<Decision> resolve_env(const std::vector<EnvEntry>& wanted, const EnvLookup& current);

// The same, knowing what the user submitted (the job's environment before any
// container plugin acted): a current value that differs from the submitted
// one was put there by a container image or hook. Such a value is kept
// (KeptContainer), except for rendezvous entries, which take the user's
// submitted value if there was one, else wireup's; Force entries replace it.
std::vector<Decision> resolve_env(const std::vector<EnvEntry>& wanted, const EnvLookup& current,
                                  const EnvLookup& submitted);

const char* action_name(Action a);

}  // namespace wireup
