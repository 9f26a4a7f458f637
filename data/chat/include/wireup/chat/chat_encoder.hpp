#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wireup/chat/chat_template.hpp"
#include "wireup/chat/conversation.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

namespace wireup::chat {

// A conversation to token ids and their loss mask with the template's
// tokenizer (Llama 3's tiktoken file or tokenizer.json; Qwen's
// tokenizer.json): the tokens the template writes (template_special_tokens)
// are put in by id, the text between them is encoded by the tokenizer as any
// text (so a message that spells "<|eot_id|>" or "<|im_end|>" gets the ids of
// that text, never the token: no prompt injection), which gives the ids
// Hugging Face's tokenizer gives the rendered text where the contents spell
// no special token. A text token is trained when its first byte is
// (Part::trained_from); const and thread-safe.
class ChatEncoder {
 public:
  // InputError naming `tokenizer_name` when the tokenizer lacks one of the
  // template's special tokens (it is not the template's model's).
  ChatEncoder(const tokenizer::Tokenizer& tokenizer, const std::string& tokenizer_name,
              TemplateOptions options);

  // Appends the conversation's ids and mask (1: trained), one each a token.
  void encode(const Conversation& c, std::vector<std::uint32_t>& ids,
              std::vector<std::uint8_t>& mask) const;
  // The same for parts already rendered.
  void encode_parts(const std::vector<Part>& parts, std::vector<std::uint32_t>& ids,
                    std::vector<std::uint8_t>& mask) const;

  const TemplateOptions& options() const { return options_; }

 private:
  std::uint32_t special(const std::string& spelling) const;

  const tokenizer::Tokenizer& tokenizer_;
  TemplateOptions options_;
  std::vector<std::pair<std::string, std::uint32_t>> specials_;
};

}  // namespace wireup::chat
