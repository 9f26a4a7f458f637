// wireup_chat_render TOKENIZER TEMPLATE TRAIN_ON [DATE] < rows.jsonl: for each
// JSONL row one JSON line {"text", "ids", "mask", "generation_text"}
// (wireup_chat's rendering, ids and loss mask, and the rendering with the
// generation prompt) or {"error"} for a bad row. For the comparison with
// Hugging Face's rendering and tiktoken's ids (chat_template_parity.py);
// exit 2 with the message when the tokenizer or an option is bad.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "wireup/chat/chat_encoder.hpp"
#include "wireup/error.hpp"

int main(int argc, char** argv) {
  using namespace wireup::chat;
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: wireup_chat_render TOKENIZER TEMPLATE TRAIN_ON [DATE] < rows.jsonl\n";
    return 2;
  }
  try {
    const auto tok = wireup::tokenizer::Tokenizer::load(argv[1]);
    TemplateOptions o;
    o.chat_template = parse_template(argv[2], "template");
    o.train_on = parse_train_on(argv[3], "train_on");
    if (argc == 5) o.date_string = argv[4];
    const ChatEncoder enc(tok, argv[1], o);
    std::string line;
    std::vector<std::uint32_t> ids;
    std::vector<std::uint8_t> mask;
    while (std::getline(std::cin, line)) {
      nlohmann::json out;
      try {
        const auto c = parse_row(line);
        ids.clear();
        mask.clear();
        enc.encode(c, ids, mask);
        auto parts = render(c, o);
        const std::string text = rendered_text(parts);
        add_generation_prompt(parts);
        out = {{"text", text},
               {"ids", ids},
               {"mask", mask},
               {"generation_text", rendered_text(parts)}};
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
