#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/tokenizer/tokenizer.hpp"

namespace wireup::test {

// CPU seconds of this thread: a bound on it catches quadratic work without
// failing on a loaded machine (wall time would).
double thread_cpu_seconds();

// A real vocabulary in WIREUP_VOCAB_DIR (tests/data/vocab/fetch-vocab.sh puts
// llama3.tiktoken, cl100k_base.tiktoken and qwen3/ there); the test fails when it is missing.
std::filesystem::path vocab_file(const std::string& name);

// Llama 3's tokenizer.model, loaded once.
const tokenizer::Tokenizer& llama3();
// Qwen3's published tokenizer.json (WIREUP_VOCAB_DIR/qwen3), loaded once.
const tokenizer::Tokenizer& qwen3();

std::vector<int> ids_of(const tokenizer::Tokenizer& t, std::string_view text);

// Texts of every kind the tests use: scripts, emoji with ZWJ, digit and
// whitespace runs, tabs, CRLF, contractions in any case, special spellings.
extern const std::vector<std::string> kTexts;

}  // namespace wireup::test
