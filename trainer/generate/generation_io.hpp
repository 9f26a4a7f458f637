#pragma once
#include <cstdint>
#include <string>
#include <vector>

// What `wireup-train generate` reads and prints besides the model: the
// prompts file, the stop rule, the output lines. No LibTorch.
namespace wireup::train::generate {

// --prompts FILE: JSONL, one object with a string "prompt" a line (other keys
// ignored, blank lines skipped). InputError naming the file and line.
std::vector<std::string> read_prompts_file(const std::string& path);

// Why a completion ended: a stop token (<|eot_id|>, the tokenizer's EOS),
// --max_new_tokens, or the model's context full.
enum class StopReason { StopToken, MaxNewTokens, Context };
const char* stop_reason_name(StopReason r);  // "stop_token", "max_new_tokens", "context"

// The stop rule: the ids the tokenizer names as ends (negative ids, its
// "none", left out; each once).
class StopRule {
 public:
  explicit StopRule(const std::vector<int>& ids);
  bool stops(std::int64_t id) const;
  const std::vector<int>& ids() const { return ids_; }

 private:
  std::vector<int> ids_;
};

struct Completion {
  std::string prompt;
  std::string text;                      // the decoded completion, stop token left out
  std::vector<std::int64_t> prompt_ids;  // as fed to the model
  std::vector<std::int64_t> ids;         // generated, stop token left out
  StopReason stop = StopReason::MaxNewTokens;
};

// One JSON object, no newline: {"prompt":...,"completion":...,"tokens":N,
// "stop":...} and, with `show_ids`, "prompt_ids" and "ids". Bytes that are
// not UTF-8 (a completion cut inside a character) become U+FFFD.
std::string completion_json(const Completion& c, bool show_ids);

// The summary line on stderr: prompts, tokens generated, seconds, tokens/s.
std::string generate_summary(std::size_t prompts, std::int64_t tokens, double seconds);

}  // namespace wireup::train::generate
