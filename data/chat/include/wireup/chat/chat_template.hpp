#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/chat/conversation.hpp"

namespace wireup::chat {

// The chat templates of Meta's Llama 3.x Instruct models, rendered exactly as
// Hugging Face renders the `chat_template` of their tokenizer_config.json for
// system/user/assistant messages (no tools; the generation prompt by add_generation_prompt):
//   Llama3   Meta-Llama-3-8B-Instruct: <|begin_of_text|>, then per message
//            <|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|>
//   Llama31  Llama-3.1-8B-Instruct (and 3.2, 3.3 without strftime_now): the
//            same, after a system block that always comes first:
//            "Cutting Knowledge Date: December 2023\nToday Date: DATE\n\n"
//            followed by the first message's content when that is a system
//            message (which then is not rendered again).
// CONTENT is the content trimmed as Jinja's `trim` (Python's str.strip()).
enum class Template { Llama3, Llama31 };

// Which tokens the loss trains on.
enum class TrainOn {
  All,            // every token of the conversation
  Assistant,      // each assistant message's content and its <|eot_id|>
  LastAssistant,  // the last assistant message's content and its <|eot_id|>
};

// "llama3", "llama3.1"; "all", "assistant", "last-assistant". InputError
// naming `what` (the option) for anything else.
Template parse_template(const std::string& text, const std::string& what);
const char* template_name(Template t);
TrainOn parse_train_on(const std::string& text, const std::string& what);
const char* train_on_name(TrainOn t);

// The 3.1 template's "Today Date" when no date_string is passed.
inline constexpr std::string_view kLlama31DefaultDate = "26 Jul 2024";

struct TemplateOptions {
  Template chat_template = Template::Llama3;
  TrainOn train_on = TrainOn::Assistant;
  std::string date_string{kLlama31DefaultDate};  // Llama31 only
};

// A piece of the rendered text: a special token (its spelling, tokenized as
// that one token) or ordinary text (tokenized as text: a special token's
// spelling in it stays text). Bytes [trained_from, size) of the text are
// trained; a special token is trained when trained_from is 0.
struct Part {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  bool special = false;
  std::string text;
  std::size_t trained_from = kNone;
  bool operator==(const Part&) const = default;
};

// The conversation rendered as parts, in order.
std::vector<Part> render(const Conversation& c, const TemplateOptions& o);
// apply_chat_template's add_generation_prompt=True: appends the assistant's
// header, <|start_header_id|>assistant<|end_header_id|> + "\n\n", untrained,
// after the rendered conversation (what a model completes at inference).
void add_generation_prompt(std::vector<Part>& parts);
// The parts' text joined: the string Hugging Face's apply_chat_template(
// messages, tokenize=False) returns.
std::string rendered_text(const std::vector<Part>& parts);

// Jinja's `trim` filter: Python's str.strip(), which strips the Unicode
// whitespace of str.isspace() (ASCII \t\n\v\f\r, space, \x1c-\x1f, U+0085,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)
// from both ends of UTF-8 text.
std::string python_strip(std::string_view text);

}  // namespace wireup::chat
