#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wireup::chat {

enum class Role { System, User, Assistant };
const char* role_name(Role role);  // "system", "user", "assistant"

struct Message {
  Message() = default;
  Message(Role r, std::string text, std::optional<std::string> reasoning = std::nullopt)
      : role(r), content(std::move(text)), reasoning_content(std::move(reasoning)) {}

  Role role = Role::User;
  std::string content;
  // An assistant message's "reasoning_content" (null or absent: none); only
  // the qwen3 template renders it.
  std::optional<std::string> reasoning_content;
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
// A message may carry "reasoning_content" (a string or null). Other keys of
// the row or of a message are ignored. Tool use is refused by name: a
// message of role "tool", a message with "tool_calls", a row with non-empty
// "tools". InputError saying what is wrong (bad JSON, an unknown role, a
// content that is not a string, no assistant message, ...) and where in the
// row, without a location in the input: the caller names file and line.
Conversation parse_row(std::string_view line);

}  // namespace wireup::chat
