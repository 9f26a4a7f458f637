#include "wireup/chat/conversation.hpp"

#include "message_json.hpp"
#include "wireup/error.hpp"

namespace wireup::chat {
namespace {

using detail::append_messages;
using detail::kind_of;
using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw InputError(what); }

// prompt/completion: two strings, or two lists of messages.
void prompt_completion(const json& row, Conversation& c) {
  const auto& p = row["prompt"];
  const auto& q = row["completion"];
  if (p.is_string() && q.is_string()) {
    c.messages.push_back({Role::User, p.get<std::string>()});
    c.messages.push_back({Role::Assistant, q.get<std::string>()});
    return;
  }
  if (p.is_array() && q.is_array()) {
    append_messages(p, "prompt", c.messages);
    append_messages(q, "completion", c.messages);
    return;
  }
  bad("'prompt' and 'completion': expected two strings or two lists of messages, found " +
      std::string(kind_of(p)) + " and " + kind_of(q));
}

}  // namespace

const char* role_name(Role role) {
  switch (role) {
    case Role::System:
      return "system";
    case Role::User:
      return "user";
    case Role::Assistant:
      return "assistant";
  }
  return "?";
}

Conversation parse_row(std::string_view line) {
  const json row = detail::parse_object_row(line);
  const auto tools = row.find("tools");
  if (tools != row.end() && !tools->is_null() && !(tools->is_array() && tools->empty()))
    bad("'tools': tool definitions; tool use is not supported");
  Conversation c;
  if (row.contains("messages"))
    append_messages(row["messages"], "messages", c.messages);
  else if (row.contains("prompt") && row.contains("completion"))
    prompt_completion(row, c);
  else
    bad("expected a JSON object with 'messages' (a list of {\"role\", \"content\"}) or "
        "'prompt' and 'completion'");
  bool assistant = false;
  for (const auto& m : c.messages) assistant = assistant || m.role == Role::Assistant;
  if (!assistant) bad("no assistant message: a conversation needs one to train on");
  return c;
}

}  // namespace wireup::chat
