// The ChatML templates of Qwen2.5-Instruct and Qwen3 as their published
// `chat_template` renders system/user/assistant messages (the tool branches
// are never taken: parse_row refuses tool use).
#include "render_parts.hpp"

namespace wireup::chat::detail {
namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kThink = "<think>";
constexpr std::string_view kEndThink = "</think>";
constexpr std::string_view kQwenSystem =
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
constexpr std::string_view kToolResponse = "<tool_response>";
constexpr std::string_view kEndToolResponse = "</tool_response>";

// Python's str.lstrip('\n') and str.rstrip('\n').
std::string_view lstrip_newlines(std::string_view s) {
  const auto i = s.find_first_not_of('\n');
  return i == std::string_view::npos ? std::string_view() : s.substr(i);
}
std::string_view rstrip_newlines(std::string_view s) {
  const auto i = s.find_last_not_of('\n');
  return i == std::string_view::npos ? std::string_view() : s.substr(0, i + 1);
}

struct Reasoned {
  std::string reasoning;
  std::string content;
};

// Qwen3's reasoning of an assistant message: its reasoning_content (content
// unchanged), or else, when the content holds </think>,
//   reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
//   content   = content.split('</think>')[-1].lstrip('\n')
// (neither spelling overlaps itself, so find/rfind are Python's split).
Reasoned split_reasoning(const Message& m) {
  if (m.reasoning_content) return {*m.reasoning_content, m.content};
  const std::string_view content = m.content;
  const auto first_end = content.find(kEndThink);
  if (first_end == std::string_view::npos) return {"", m.content};
  std::string_view before = rstrip_newlines(content.substr(0, first_end));
  const auto open = before.rfind(kThink);
  if (open != std::string_view::npos) before = before.substr(open + kThink.size());
  const auto after = content.substr(content.rfind(kEndThink) + kEndThink.size());
  return {std::string(lstrip_newlines(before)), std::string(lstrip_newlines(after))};
}

bool is_query(const Message& m) {
  if (m.role != Role::User) return false;
  const std::string_view s = m.content;
  return !(s.starts_with(kToolResponse) && s.ends_with(kEndToolResponse));
}

// The template's ns.last_query_index: the last user message that is not a
// tool response wrapped as <tool_response>...</tool_response>, else the last
// message.
std::size_t last_query_index(const Conversation& c) {
  for (std::size_t i = c.messages.size(); i-- > 0;)
    if (is_query(c.messages[i])) return i;
  return c.messages.size() - 1;
}

// <|im_start|> ROLE\nBODY <|im_end|> \n, BODY and <|im_end|> trained when
// `trained` (everything when `all`).
void turn(std::vector<Part>& out, std::string_view role, std::string_view body, bool trained,
          bool all) {
  append_special(out, kImStart, all);
  const std::string head = std::string(role) + "\n";
  append_text(out, head + std::string(body), all ? 0 : trained ? head.size() : Part::kNone);
  append_special(out, kImEnd, trained || all);
  append_text(out, "\n", all ? 0 : Part::kNone);
}

// Qwen3's assistant turn with its reasoning: <|im_start|> assistant\n
// <think> \nREASONING\n </think> \n\nCONTENT <|im_end|> \n, REASONING
// stripped of '\n' and CONTENT of leading '\n'; trained from <think> through
// <|im_end|> when `trained`.
void thinking_turn(std::vector<Part>& out, const Reasoned& r, bool trained, bool all) {
  const std::size_t from = trained || all ? 0 : Part::kNone;
  append_special(out, kImStart, all);
  append_text(out, "assistant\n", all ? 0 : Part::kNone);
  append_special(out, kThink, trained || all);
  append_text(out, "\n" + std::string(lstrip_newlines(rstrip_newlines(r.reasoning))) + "\n", from);
  append_special(out, kEndThink, trained || all);
  append_text(out, "\n\n" + std::string(lstrip_newlines(r.content)), from);
  append_special(out, kImEnd, trained || all);
  append_text(out, "\n", all ? 0 : Part::kNone);
}

}  // namespace

std::vector<Part> render_chatml(const Conversation& c, const TemplateOptions& o) {
  const bool all = o.train_on == TrainOn::All;
  const bool qwen3 = o.chat_template == Template::Qwen3;
  std::vector<Part> out;
  if (!qwen3 && (c.messages.empty() || c.messages.front().role != Role::System))
    turn(out, "system", kQwenSystem, false, all);
  if (c.messages.empty()) return out;
  const auto trained = trained_turns(c, o.train_on);
  const std::size_t last_query = last_query_index(c);
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    const Message& m = c.messages[i];
    if (!qwen3 || m.role != Role::Assistant) {
      turn(out, role_name(m.role), m.content, trained[i], all);
      continue;
    }
    const Reasoned r = split_reasoning(m);
    const bool last = i + 1 == c.messages.size();
    if (i > last_query && (last || !r.reasoning.empty()))
      thinking_turn(out, r, trained[i], all);
    else
      turn(out, "assistant", r.content, trained[i], all);
  }
  return out;
}

void add_chatml_generation_prompt(std::vector<Part>& parts, const TemplateOptions& o) {
  append_special(parts, kImStart, false);
  append_text(parts, "assistant\n", Part::kNone);
  if (o.chat_template != Template::Qwen3 || o.enable_thinking) return;
  append_special(parts, kThink, false);
  append_text(parts, "\n\n", Part::kNone);
  append_special(parts, kEndThink, false);
  append_text(parts, "\n\n", Part::kNone);
}

}  // namespace wireup::chat::detail
