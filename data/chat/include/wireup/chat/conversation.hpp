#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace wireup::chat {

enum class Role { System, User, Assistant };
const char* role_name(Role role);  // "system", "user", "assistant"

struct Message {
  Role role = Role::User;
  std::string content;
  bool operator==(const Message&) const = default;
};

struct Conversation {
  std::vector<Message> messages;
  bool operator==(const Conversation&) const = default;
};

// One JSONL row, as Hugging Face chat data sets hold them:
//   {"messages": [{"role": "system"|"user"|"assistant", "content": "..."}, ...]}
//   {"prompt": "...", "completion": "..."}  (a user message, then an assistant one)
//   {"prompt": [messages], "completion": [messages]}  (joined in that order)
// Other keys of the row or of a message are ignored. InputError saying what
// is wrong (bad JSON, an unknown role, a content that is not a string, no
// assistant message, ...) without a location: the caller names file and line.
Conversation parse_row(std::string_view line);

}  // namespace wireup::chat
