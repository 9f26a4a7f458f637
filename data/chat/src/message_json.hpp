#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "wireup/chat/conversation.hpp"

// Internal to wireup_chat: a JSON row's messages, for conversation.cpp and
// preference.cpp. Errors are InputError saying what is wrong where.
namespace wireup::chat::detail {

// "null", "a list", "an object", "a boolean", "a number" or "a string".
const char* kind_of(const nlohmann::json& j);
// One message object; `where` names it in the error ("'messages[2]'").
Message message_of(const nlohmann::json& m, const std::string& where);
// A list of messages under `key`, appended to `out`.
void append_messages(const nlohmann::json& list, const std::string& key, std::vector<Message>& out);
// The row parsed as a JSON object (bad JSON or another value: InputError).
nlohmann::json parse_object_row(std::string_view line);

}  // namespace wireup::chat::detail
