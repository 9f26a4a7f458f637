#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/chat/conversation.hpp"

namespace wireup::chat {

// The chat templates of Llama 3.x and Qwen Instruct models, rendered exactly
// as Hugging Face renders the `chat_template` of their tokenizer_config.json
// for system/user/assistant messages (no tools; the generation prompt by
// add_generation_prompt):
//   Llama3   Meta-Llama-3-8B-Instruct: <|begin_of_text|>, then per message
//            <|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|>
//            with CONTENT trimmed as Jinja's `trim` (python_strip).
//   Llama31  Llama-3.1-8B-Instruct (and 3.2, 3.3 without strftime_now): the
//            same, after a system block that always comes first:
//            "Cutting Knowledge Date: December 2023\nToday Date: DATE\n\n"
//            followed by the first message's content when that is a system
//            message (which then is not rendered again).
//   Qwen25   Qwen2.5-Instruct (ChatML): per message
//            <|im_start|>ROLE\nCONTENT<|im_end|>\n, contents as they are,
//            after <|im_start|>system\nYou are Qwen, created by Alibaba
//            Cloud. You are a helpful assistant.<|im_end|>\n when the first
//            message is not a system message.
//   Qwen3    Qwen3 (ChatML, no default system message) with its reasoning
//            rule: an assistant message's reasoning is its reasoning_content,
//            or else, when its content holds </think>, the text before the
//            first </think> (after the last <think> before it) and the
//            content becomes the text after the last </think>. Assistant
//            messages after the last user query (a user message that is not
//            <tool_response>...</tool_response>) are rendered as
//            <think>\nREASONING\n</think>\n\nCONTENT when they are the last
//            message or have a non-empty reasoning; all others as CONTENT
//            alone (earlier reasoning is dropped). See qwen_template.cpp.
enum class Template { Llama3, Llama31, Qwen25, Qwen3 };

// Which tokens the loss trains on.
enum class TrainOn {
  All,            // every token of the conversation
  Assistant,      // each assistant message's turn after its header, end token included
  LastAssistant,  // the last assistant message's turn after its header, end token included
};

// "llama3", "llama3.1", "qwen2.5", "qwen3"; "all", "assistant",
// "last-assistant". InputError naming `what` (the option) for anything else.
Template parse_template(const std::string& text, const std::string& what);
const char* template_name(Template t);
std::vector<std::string> template_names();  // every template's, in the order above
// The template whose published Jinja text (a tokenizer_config.json's
// "chat_template": Meta-Llama-3-8B-Instruct's, Llama-3.1-8B-Instruct's,
// Qwen2.5-Instruct's, Qwen3's) `jinja` is, byte for byte (told by SHA-256);
// nullopt for any other text.
std::optional<Template> template_of_published_text(const std::string& jinja);
TrainOn parse_train_on(const std::string& text, const std::string& what);
const char* train_on_name(TrainOn t);

// The 3.1 template's "Today Date" when no date_string is passed.
inline constexpr std::string_view kLlama31DefaultDate = "26 Jul 2024";

struct TemplateOptions {
  Template chat_template = Template::Llama3;
  TrainOn train_on = TrainOn::Assistant;
  std::string date_string{kLlama31DefaultDate};  // Llama31 only
  // Qwen3's enable_thinking, which only changes the generation prompt:
  // false ends it with an empty reasoning block, <think>\n\n</think>\n\n,
  // so the model answers without reasoning. Ignored by the other templates.
  bool enable_thinking = true;
};

// The special tokens `t` writes, each tokenized as that one token: what a
// tokenizer must have for it.
std::vector<std::string_view> template_special_tokens(Template t);

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
// apply_chat_template's add_generation_prompt=True (and, for Qwen3,
// enable_thinking=o.enable_thinking): appends the assistant's header,
// untrained, after a conversation rendered with the same options (what a
// model completes at inference): Llama 3
// <|start_header_id|>assistant<|end_header_id|> + "\n\n"; ChatML
// <|im_start|> + "assistant\n", for Qwen3 without thinking followed by
// <think> + "\n\n" + </think> + "\n\n". std::invalid_argument when
// `parts` were rendered by the other family of templates (Llama 3 parts
// start with <|begin_of_text|>): pass the options they were rendered with.
void add_generation_prompt(std::vector<Part>& parts, const TemplateOptions& o = {});
// The parts' text joined: the string Hugging Face's apply_chat_template(
// messages, tokenize=False) returns.
std::string rendered_text(const std::vector<Part>& parts);

// Jinja's `trim` filter: Python's str.strip(), which strips the Unicode
// whitespace of str.isspace() (ASCII \t\n\v\f\r, space, \x1c-\x1f, U+0085,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000)
// from both ends of UTF-8 text.
std::string python_strip(std::string_view text);

}  // namespace wireup::chat
