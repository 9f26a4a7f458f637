#include "wireup/chat/chat_template.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "render_parts.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace wireup::chat {
namespace {

constexpr std::string_view kBeginOfText = "<|begin_of_text|>";
constexpr std::string_view kStartHeader = "<|start_header_id|>";
constexpr std::string_view kEndHeader = "<|end_header_id|>";
constexpr std::string_view kEot = "<|eot_id|>";

bool python_space(std::uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// The code point starting at `i` of valid UTF-8 text, and its length.
std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t& len) {
  const auto b = static_cast<unsigned char>(s[i]);
  len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  if (i + len > s.size()) {
    len = 1;
    return b;
  }
  std::uint32_t c = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
  for (std::size_t k = 1; k < len; ++k) c = c << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return c;
}

// Where the code point ending just before `end` starts.
std::size_t previous_start(std::string_view s, std::size_t end) {
  std::size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

// <|start_header_id|>ROLE<|end_header_id|> + "\n\n" + BODY + <|eot_id|>, with
// BODY and the <|eot_id|> trained when `trained` (everything when `all`).
void turn(std::vector<Part>& out, std::string_view role, const std::string& body, bool trained,
          bool all) {
  detail::append_special(out, kStartHeader, all);
  detail::append_text(out, std::string(role), all ? 0 : Part::kNone);
  detail::append_special(out, kEndHeader, all);
  detail::append_text(out, "\n\n" + body, all ? 0 : trained ? 2 : Part::kNone);
  detail::append_special(out, kEot, trained || all);
}

bool llama(Template t) { return t == Template::Llama3 || t == Template::Llama31; }

std::vector<Part> render_llama(const Conversation& c, const TemplateOptions& o) {
  const bool all = o.train_on == TrainOn::All;
  const auto trained = detail::trained_turns(c, o.train_on);
  std::vector<Part> out;
  detail::append_special(out, kBeginOfText, all);
  std::size_t first = 0;
  if (o.chat_template == Template::Llama31) {
    std::string system_message;
    if (!c.messages.empty() && c.messages[0].role == Role::System) {
      system_message = python_strip(c.messages[0].content);
      first = 1;
    }
    turn(out, "system",
         "Cutting Knowledge Date: December 2023\nToday Date: " + o.date_string + "\n\n" +
             system_message,
         false, all);
  }
  for (std::size_t i = first; i < c.messages.size(); ++i)
    turn(out, role_name(c.messages[i].role), python_strip(c.messages[i].content), trained[i], all);
  return out;
}

}  // namespace

std::optional<Template> template_of_published_text(const std::string& jinja) {
  // SHA-256 of each published chat_template string (the copies in
  // tests/data/chat/templates/, checked there against these).
  static const std::pair<const char*, Template> published[] = {
      {"ba03a121d097859c7b5b9cd03af99aafe95275210d2876f642ad9929a150f122", Template::Llama3},
      {"e10ca381b1ccc5cf9db52e371f3b6651576caee0a630b452e2816b2d404d4b65", Template::Llama31},
      {"cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f", Template::Qwen25},
      {"87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5", Template::Qwen3}};
  const std::string digest = wireup::sha256_hex(jinja);
  for (const auto& [sha, t] : published)
    if (digest == sha) return t;
  return std::nullopt;
}

namespace {
constexpr Template kTemplates[] = {Template::Llama3, Template::Llama31, Template::Qwen25,
                                   Template::Qwen3};
}  // namespace

std::vector<std::string> template_names() {
  std::vector<std::string> out;
  for (const Template t : kTemplates) out.emplace_back(template_name(t));
  return out;
}

Template parse_template(const std::string& text, const std::string& what) {
  for (const Template t : kTemplates)
    if (text == template_name(t)) return t;
  throw InputError(what + " '" + text + "': expected llama3, llama3.1, qwen2.5 or qwen3");
}

const char* template_name(Template t) {
  switch (t) {
    case Template::Llama3:
      return "llama3";
    case Template::Llama31:
      return "llama3.1";
    case Template::Qwen25:
      return "qwen2.5";
    case Template::Qwen3:
      return "qwen3";
  }
  return "?";
}

std::vector<std::string_view> template_special_tokens(Template t) {
  if (llama(t)) return {kBeginOfText, kStartHeader, kEndHeader, kEot};
  if (t == Template::Qwen25) return {"<|im_start|>", "<|im_end|>"};
  return {"<|im_start|>", "<|im_end|>", "<think>", "</think>"};
}

TrainOn parse_train_on(const std::string& text, const std::string& what) {
  if (text == "all") return TrainOn::All;
  if (text == "assistant") return TrainOn::Assistant;
  if (text == "last-assistant") return TrainOn::LastAssistant;
  throw InputError(what + " '" + text + "': expected all, assistant or last-assistant");
}

const char* train_on_name(TrainOn t) {
  switch (t) {
    case TrainOn::All:
      return "all";
    case TrainOn::Assistant:
      return "assistant";
    case TrainOn::LastAssistant:
      return "last-assistant";
  }
  return "?";
}

std::string python_strip(std::string_view text) {
  std::size_t begin = 0, end = text.size(), len = 0;
  while (begin < end && python_space(code_point(text, begin, len))) begin += len;
  while (end > begin) {
    const std::size_t at = previous_start(text, end);
    if (!python_space(code_point(text, at, len))) break;
    end = at;
  }
  return std::string(text.substr(begin, end - begin));
}

std::vector<bool> detail::trained_turns(const Conversation& c, TrainOn train_on) {
  std::vector<bool> out(c.messages.size(), false);
  if (train_on == TrainOn::All) return out;
  for (std::size_t i = c.messages.size(); i-- > 0;) {
    if (c.messages[i].role != Role::Assistant) continue;
    out[i] = true;
    if (train_on == TrainOn::LastAssistant) break;
  }
  return out;
}

std::vector<Part> render(const Conversation& c, const TemplateOptions& o) {
  return llama(o.chat_template) ? render_llama(c, o) : detail::render_chatml(c, o);
}

void add_generation_prompt(std::vector<Part>& parts, const TemplateOptions& o) {
  const bool llama_parts =
      !parts.empty() && parts.front().special && parts.front().text == kBeginOfText;
  if (!parts.empty() && llama_parts != llama(o.chat_template))
    throw std::invalid_argument(std::string("add_generation_prompt: the ") +
                                template_name(o.chat_template) +
                                " generation prompt after parts another template rendered");
  if (!llama(o.chat_template)) return detail::add_chatml_generation_prompt(parts, o);
  detail::append_special(parts, kStartHeader, false);
  detail::append_text(parts, "assistant", Part::kNone);
  detail::append_special(parts, kEndHeader, false);
  detail::append_text(parts, "\n\n", Part::kNone);
}

std::string rendered_text(const std::vector<Part>& parts) {
  std::string out;
  for (const auto& p : parts) out += p.text;
  return out;
}

}  // namespace wireup::chat
