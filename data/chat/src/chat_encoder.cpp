#include "wireup/chat/chat_encoder.hpp"

#include <stdexcept>
#include <utility>

#include "wireup/error.hpp"

namespace wireup::chat {

ChatEncoder::ChatEncoder(const tokenizer::Tokenizer& tokenizer, const std::string& tokenizer_name,
                         TemplateOptions options)
    : tokenizer_(tokenizer), options_(std::move(options)) {
  const bool llama3 =
      options_.chat_template == Template::Llama3 || options_.chat_template == Template::Llama31;
  for (const std::string_view s : template_special_tokens(options_.chat_template)) {
    const int id = tokenizer.special_id(s);
    if (id < 0)
      throw InputError(tokenizer_name + " has no special token " + std::string(s) +
                       ": --chat-template " + template_name(options_.chat_template) + " needs " +
                       (llama3 ? "a Llama 3 tokenizer (its tokenizer.model or tokenizer.json)"
                        : options_.chat_template == Template::Qwen3
                            ? "a Qwen3 tokenizer (its tokenizer.json)"
                            : "a Qwen2.5 tokenizer (its tokenizer.json)"));
    specials_.emplace_back(s, static_cast<std::uint32_t>(id));
  }
}

std::uint32_t ChatEncoder::special(const std::string& spelling) const {
  for (const auto& [s, id] : specials_)
    if (s == spelling) return id;
  throw std::logic_error("ChatEncoder: no special token " + spelling);
}

void ChatEncoder::encode_parts(const std::vector<Part>& parts, std::vector<std::uint32_t>& ids,
                               std::vector<std::uint8_t>& mask) const {
  std::vector<int> text_ids;
  for (const Part& p : parts) {
    if (p.special) {
      ids.push_back(special(p.text));
      mask.push_back(p.trained_from == 0 ? 1 : 0);
      continue;
    }
    tokenizer_.encode(p.text, text_ids);
    std::size_t at = 0;  // the byte of p.text where the next token starts
    for (const int id : text_ids) {
      ids.push_back(static_cast<std::uint32_t>(id));
      mask.push_back(p.trained_from != Part::kNone && at >= p.trained_from ? 1 : 0);
      at += tokenizer_.token_length(id);
    }
    if (at != p.text.size())
      throw std::logic_error("ChatEncoder: the ids of a text do not cover its bytes");
  }
}

void ChatEncoder::encode(const Conversation& c, std::vector<std::uint32_t>& ids,
                         std::vector<std::uint8_t>& mask) const {
  encode_parts(render(c, options_), ids, mask);
}

}  // namespace wireup::chat
