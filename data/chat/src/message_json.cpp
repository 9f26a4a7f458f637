#include "message_json.hpp"

#include "wireup/error.hpp"

namespace wireup::chat::detail {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw InputError(what); }

}  // namespace

const char* kind_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list";
  if (j.is_object()) return "an object";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  return "a string";
}

Message message_of(const json& m, const std::string& where) {
  if (!m.is_object())
    bad(where + ": expected an object with 'role' and 'content', found " + kind_of(m));
  const auto role = m.find("role");
  if (role == m.end() || !role->is_string())
    bad(where + ".role: expected \"system\", \"user\" or \"assistant\"" +
        (role == m.end() ? std::string(" (missing)") : std::string(", found ") + kind_of(*role)));
  Message out;
  const auto r = role->get<std::string>();
  if (r == "system")
    out.role = Role::System;
  else if (r == "user")
    out.role = Role::User;
  else if (r == "assistant")
    out.role = Role::Assistant;
  else
    bad(where + ".role: unknown role \"" + r + "\"; expected system, user or assistant" +
        (r == "tool" ? " (tool use is not supported)" : ""));
  if (m.contains("tool_calls")) bad(where + ".tool_calls: a tool call; tool use is not supported");
  const auto content = m.find("content");
  if (content == m.end()) bad(where + ".content: expected a string (missing)");
  if (!content->is_string()) bad(where + ".content: expected a string, found " + kind_of(*content));
  out.content = content->get<std::string>();
  const auto reasoning = m.find("reasoning_content");
  if (reasoning != m.end() && !reasoning->is_null()) {
    if (!reasoning->is_string())
      bad(where + ".reasoning_content: expected a string or null, found " + kind_of(*reasoning));
    out.reasoning_content = reasoning->get<std::string>();
  }
  return out;
}

void append_messages(const json& list, const std::string& key, std::vector<Message>& out) {
  if (!list.is_array()) bad("'" + key + "': expected a list of messages, found " + kind_of(list));
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(message_of(list[i], "'" + key + "[" + std::to_string(i) + "]'"));
}

json parse_object_row(std::string_view line) {
  json row;
  try {
    row = json::parse(line);
  } catch (const json::exception& e) {  // syntax, bad UTF-8, a number out of range
    bad(std::string("bad JSON line (") + e.what() + "); expected one JSON object per line");
  }
  if (!row.is_object()) bad(std::string("expected a JSON object, found ") + kind_of(row));
  return row;
}

}  // namespace wireup::chat::detail
