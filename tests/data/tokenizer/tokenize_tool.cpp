// wireup_tokenize TOKENIZER: reads a JSON array of strings on stdin, writes
// {"kind", "vocab_size", "bos_id", "eos_id", "ids": [[...], ...],
// "decoded_ok": [...]} to stdout: each string's ids from Tokenizer::encode,
// and whether decode() gives the string back. For the comparison with the
// real tiktoken (tiktoken_parity.py); exit 2 with the message on bad input.
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "wireup/tokenizer/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: wireup_tokenize TOKENIZER < texts.json\n";
    return 2;
  }
  try {
    const auto tok = wireup::tokenizer::Tokenizer::load(argv[1]);
    const auto texts = nlohmann::json::parse(
        std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()));
    nlohmann::json out = {
        {"kind", tok.type_name()},        {"vocab_size", tok.vocab_size()},
        {"bos_id", tok.bos_id()},         {"eos_id", tok.eos_id()},
        {"ids", nlohmann::json::array()}, {"decoded_ok", nlohmann::json::array()}};
    std::vector<int> ids;
    for (const auto& t : texts) {
      const std::string text = t;
      tok.encode(text, ids);
      out["ids"].push_back(ids);
      out["decoded_ok"].push_back(tok.decode(ids) == text);
    }
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "wireup_tokenize: " << e.what() << "\n";
    return 2;
  }
}
