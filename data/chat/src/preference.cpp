#include "wireup/chat/preference.hpp"

#include <algorithm>

#include "message_json.hpp"

namespace wireup::chat {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const char* reason, const std::string& what) {
  throw PairError(reason, what);
}

// TRL's is_conversational: a list whose first item is an object with "role".
bool conversational(const json& v) {
  return v.is_array() && !v.empty() && v.front().is_object() && v.front().contains("role");
}

std::vector<Message> messages_of(const json& v, const std::string& key) {
  std::vector<Message> out;
  try {
    detail::append_messages(v, key, out);
  } catch (const PairError&) {
    throw;
  } catch (const InputError& e) {
    fail("bad_value", e.what());
  }
  return out;
}

std::string string_of(const json& v, const char* key) {
  if (!v.is_string())
    fail("bad_value", std::string("'") + key + "': expected a string, as the other fields are (" +
                          detail::kind_of(v) + " found)");
  return v.get<std::string>();
}

void check_conversation(const PreferencePair& p) {
  if (p.prompt_messages.empty())
    fail("bad_value", "the prompt has no message (chosen and rejected differ from the first)");
  if (p.prompt_messages.back().role != Role::User)
    fail("bad_value", std::string("the prompt ends with a ") +
                          role_name(p.prompt_messages.back().role) +
                          " message; expected a user message, which the completions answer");
  for (const auto* side : {&p.chosen_messages, &p.rejected_messages}) {
    const char* key = side == &p.chosen_messages ? "chosen" : "rejected";
    if (side->empty()) fail("empty_completion", std::string("'") + key + "': no message");
    for (std::size_t i = 0; i < side->size(); ++i)
      if ((*side)[i].role != Role::Assistant)
        fail("bad_value", std::string("'") + key + "[" + std::to_string(i) + "]': a " +
                              role_name((*side)[i].role) +
                              " message; a completion holds assistant messages");
  }
}

PreferencePair conversation_pair(const json& row, const json& chosen, const json& rejected) {
  PreferencePair p;
  p.conversational = true;
  p.chosen_messages = messages_of(chosen, "chosen");
  p.rejected_messages = messages_of(rejected, "rejected");
  const auto prompt = row.find("prompt");
  if (prompt == row.end() || prompt->is_null())
    extract_implicit_prompt(p.prompt_messages, p.chosen_messages, p.rejected_messages);
  else
    p.prompt_messages = messages_of(*prompt, "prompt");
  check_conversation(p);
  return p;
}

PreferencePair text_pair(const json& row, const json& chosen, const json& rejected) {
  PreferencePair p;
  p.chosen = string_of(chosen, "chosen");
  p.rejected = string_of(rejected, "rejected");
  const auto prompt = row.find("prompt");
  if (prompt == row.end() || prompt->is_null())
    extract_implicit_prompt(p.prompt, p.chosen, p.rejected);
  else
    p.prompt = string_of(*prompt, "prompt");
  for (const auto* side : {&p.chosen, &p.rejected})
    if (side->empty())
      fail("empty_completion", std::string("'") + (side == &p.chosen ? "chosen" : "rejected") +
                                   "': an empty completion");
  return p;
}

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// TRL's split point over two sequences: the first index where they differ,
// else the last index of the shorter one (its loop's last value).
template <class Seq>
std::size_t split_point(const Seq& a, const Seq& b, bool& differed) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  differed = i < n;
  return differed ? i : (n == 0 ? 0 : n - 1);
}

}  // namespace

RowKind preference_row_kind(std::string_view line) {
  try {
    const json row = detail::parse_object_row(line);
    const auto chosen = row.find("chosen"), rejected = row.find("rejected");
    if (chosen == row.end() || rejected == row.end()) return RowKind::NotPair;
    return conversational(*chosen) || conversational(*rejected) ? RowKind::ConversationalPair
                                                                : RowKind::TextPair;
  } catch (const InputError&) {
    return RowKind::NotPair;
  }
}

PreferencePair parse_preference_row(std::string_view line) {
  json row;
  try {
    row = detail::parse_object_row(line);
  } catch (const InputError& e) {
    fail("bad_json", e.what());
  }
  const auto tools = row.find("tools");
  if (tools != row.end() && !tools->is_null() && !(tools->is_array() && tools->empty()))
    fail("bad_value", "'tools': tool definitions; tool use is not supported");
  const auto chosen = row.find("chosen");
  const auto rejected = row.find("rejected");
  if (chosen == row.end() || rejected == row.end())
    fail("missing_key", std::string("no '") + (chosen == row.end() ? "chosen" : "rejected") +
                            "': expected a JSON object with 'chosen' and 'rejected' (and "
                            "optionally 'prompt'), strings or lists of messages");
  if (conversational(*chosen) || conversational(*rejected))
    return conversation_pair(row, *chosen, *rejected);
  return text_pair(row, *chosen, *rejected);
}

void extract_implicit_prompt(std::string& prompt, std::string& chosen, std::string& rejected) {
  bool differed = false;
  std::size_t at = split_point(chosen, rejected, differed);
  // Python indexes code points: a split inside one goes back to its first byte.
  while (at > 0 && continuation_byte(chosen[at])) --at;
  if (differed && at > 0 && chosen[at - 1] == ' ') --at;
  prompt = chosen.substr(0, at);
  chosen.erase(0, at);
  rejected.erase(0, at);
}

void extract_implicit_prompt(std::vector<Message>& prompt, std::vector<Message>& chosen,
                             std::vector<Message>& rejected) {
  bool differed = false;
  const std::size_t at = split_point(chosen, rejected, differed);
  prompt.assign(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(at));
  chosen.erase(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(at));
  rejected.erase(rejected.begin(), rejected.begin() + static_cast<std::ptrdiff_t>(at));
}

PairEncoder::PairEncoder(const tokenizer::Tokenizer& tokenizer, const ChatEncoder* chat)
    : tokenizer_(tokenizer), chat_(chat) {}

PairTokens PairEncoder::encode(const PreferencePair& pair) const {
  return pair.conversational ? encode_conversation(pair) : encode_text(pair);
}

namespace {

// `full` must start with the prompt's ids; the rest is the completion.
void take_completion(const std::vector<std::uint32_t>& prompt, std::vector<std::uint32_t> full,
                     const char* side, std::vector<std::uint32_t>& ids,
                     std::vector<std::uint8_t>& mask) {
  if (full.size() < prompt.size() || !std::equal(prompt.begin(), prompt.end(), full.begin()))
    fail("prompt_not_prefix", std::string("the ids of prompt + ") + side +
                                  " do not start with the prompt's ids (the tokenizer merged "
                                  "across the boundary)");
  if (full.size() == prompt.size())
    fail("empty_completion", std::string("'") + side + "': its completion has no token");
  mask.assign(full.size(), 0);
  std::fill(mask.begin() + static_cast<std::ptrdiff_t>(prompt.size()), mask.end(), 1);
  ids = std::move(full);
}

}  // namespace

PairTokens PairEncoder::encode_text(const PreferencePair& pair) const {
  const int eos = tokenizer_.eos_id();
  if (eos < 0) fail("no_eos", "text pairs end each completion with EOS; this tokenizer has none");
  const int bos = tokenizer_.bos_id();
  const std::string eos_text = tokenizer_.decode({eos});
  std::vector<int> ids;
  const auto tokens_of = [&](std::string_view text, bool end) {
    std::vector<std::uint32_t> out;
    if (bos >= 0) out.push_back(static_cast<std::uint32_t>(bos));
    // An EOS already spelled at the completion's end is that token (TRL
    // appends the spelling unless it is there; Hugging Face reads it as one).
    if (end && !eos_text.empty() && text.ends_with(eos_text)) text.remove_suffix(eos_text.size());
    tokenizer_.encode(text, ids);
    for (const int id : ids) out.push_back(static_cast<std::uint32_t>(id));
    if (end) out.push_back(static_cast<std::uint32_t>(eos));
    return out;
  };
  PairTokens t;
  const auto prompt = tokens_of(pair.prompt, false);
  t.prompt_tokens = prompt.size();
  take_completion(prompt, tokens_of(pair.prompt + pair.chosen, true), "chosen", t.chosen,
                  t.chosen_mask);
  take_completion(prompt, tokens_of(pair.prompt + pair.rejected, true), "rejected", t.rejected,
                  t.rejected_mask);
  return t;
}

PairTokens PairEncoder::encode_conversation(const PreferencePair& pair) const {
  if (chat_ == nullptr)
    fail("needs_chat_template", "a conversational pair (lists of messages) needs --chat-template");
  const auto ids_of = [&](const std::vector<Message>& completion) {
    Conversation c{pair.prompt_messages};
    c.messages.insert(c.messages.end(), completion.begin(), completion.end());
    std::vector<std::uint32_t> ids;
    std::vector<std::uint8_t> unused;
    chat_->encode(c, ids, unused);
    return ids;
  };
  std::vector<std::uint32_t> prompt;
  {
    auto parts = render(Conversation{pair.prompt_messages}, chat_->options());
    add_generation_prompt(parts, chat_->options());
    std::vector<std::uint8_t> unused;
    chat_->encode_parts(parts, prompt, unused);
  }
  PairTokens t;
  t.prompt_tokens = prompt.size();
  take_completion(prompt, ids_of(pair.chosen_messages), "chosen", t.chosen, t.chosen_mask);
  take_completion(prompt, ids_of(pair.rejected_messages), "rejected", t.rejected, t.rejected_mask);
  return t;
}

}  // namespace wireup::chat
