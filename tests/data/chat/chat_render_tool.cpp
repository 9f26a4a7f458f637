// wireup_chat_render TOKENIZER TEMPLATE TRAIN_ON [DATE] < rows.jsonl: for each
// JSONL row one JSON line {"text", "parts", "generation_text",
// "generation_text_no_thinking", "ids", "mask"}: wireup_chat's rendering, its
// parts ([special, text, trained_from], trained_from -1 for none), the
// rendering with the generation prompt (enable_thinking true and false), and
// the ids and loss mask; or {"error"} for a bad row. TOKENIZER "-": no
// tokenizer, no "ids" and "mask". For the comparison with Hugging Face's
// rendering and tiktoken's ids (chat_template_parity.py); exit 2 with the
// message when the tokenizer or an option is bad.
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "wireup/chat/chat_encoder.hpp"
#include "wireup/error.hpp"

namespace {

using namespace wireup::chat;

nlohmann::json parts_json(const std::vector<Part>& parts) {
  auto out = nlohmann::json::array();
  for (const auto& p : parts)
    out.push_back({p.special, p.text,
                   p.trained_from == Part::kNone ? -1 : static_cast<long>(p.trained_from)});
  return out;
}

nlohmann::json render_row(const std::string& line, TemplateOptions o, const ChatEncoder* enc) {
  const auto c = parse_row(line);
  const auto parts = render(c, o);
  auto prompt = parts, no_thinking = parts;
  add_generation_prompt(prompt, o);
  o.enable_thinking = false;
  add_generation_prompt(no_thinking, o);
  nlohmann::json out = {{"text", rendered_text(parts)},
                        {"parts", parts_json(parts)},
                        {"generation_text", rendered_text(prompt)},
                        {"generation_text_no_thinking", rendered_text(no_thinking)}};
  if (enc != nullptr) {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint8_t> mask;
    enc->encode(c, ids, mask);
    out["ids"] = ids;
    out["mask"] = mask;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: wireup_chat_render TOKENIZER|- TEMPLATE TRAIN_ON [DATE] < rows.jsonl\n";
    return 2;
  }
  try {
    TemplateOptions o;
    o.chat_template = parse_template(argv[2], "template");
    o.train_on = parse_train_on(argv[3], "train_on");
    if (argc == 5) o.date_string = argv[4];
    const std::string tokenizer = argv[1];
    std::optional<wireup::tokenizer::Tokenizer> tok;
    std::optional<ChatEncoder> enc;
    if (tokenizer != "-") {
      tok.emplace(wireup::tokenizer::Tokenizer::load(tokenizer));
      enc.emplace(*tok, tokenizer, o);
    }
    std::string line;
    while (std::getline(std::cin, line)) {
      nlohmann::json out;
      try {
        out = render_row(line, o, enc ? &*enc : nullptr);
      } catch (const wireup::InputError& e) {
        out = {{"error", e.what()}};
      }
      std::cout << out.dump() << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "wireup_chat_render: " << e.what() << "\n";
    return 2;
  }
}
