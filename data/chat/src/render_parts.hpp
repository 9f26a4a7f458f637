#pragma once
// What the templates' renderings share (chat_template.cpp renders Llama 3,
// qwen_template.cpp ChatML): appending parts, the mask rule per message, and
// the ChatML rendering's entry points.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/chat/chat_template.hpp"

namespace wireup::chat::detail {

// A special token, trained (trained_from 0) or not.
inline void append_special(std::vector<Part>& out, std::string_view spelling, bool trained) {
  out.push_back({true, std::string(spelling), trained ? 0 : Part::kNone});
}

// Ordinary text, trained from byte `trained_from` (Part::kNone: untrained).
inline void append_text(std::vector<Part>& out, std::string text, std::size_t trained_from) {
  out.push_back({false, std::move(text), trained_from});
}

// Per message: whether --train-on trains its turn (an assistant message's;
// with LastAssistant only the last one's; with All none: everything is).
std::vector<bool> trained_turns(const Conversation& c, TrainOn train_on);

// Template::Qwen25 and Template::Qwen3 (qwen_template.cpp).
std::vector<Part> render_chatml(const Conversation& c, const TemplateOptions& o);
void add_chatml_generation_prompt(std::vector<Part>& parts, const TemplateOptions& o);

}  // namespace wireup::chat::detail
