#include "generate/generation_io.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::train::generate {

namespace {
// The largest prompts file read (prompts beyond a model's context are refused anyway).
constexpr std::uint64_t kMaxPromptsBytes = std::uint64_t{256} << 20;
}  // namespace

std::vector<std::string> read_prompts_file(const std::string& path) {
  std::string text;
  try {
    text = io::read_text(path, kMaxPromptsBytes);
  } catch (const std::exception& e) {
    throw InputError(std::string("--prompts: ") + e.what());
  }
  std::vector<std::string> prompts;
  std::size_t line_no = 0, begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "--prompts " + path + ":" + std::to_string(line_no);
    const auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_discarded()) throw InputError(where + ": not valid JSON");
    if (!row.is_object() || !row.contains("prompt") || !row["prompt"].is_string())
      throw InputError(where + ": expected an object with a string \"prompt\"");
    prompts.push_back(row["prompt"].get<std::string>());
  }
  if (prompts.empty()) throw InputError("--prompts " + path + ": no prompt in the file");
  return prompts;
}

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::StopToken:
      return "stop_token";
    case StopReason::MaxNewTokens:
      return "max_new_tokens";
    case StopReason::Context:
      return "context";
  }
  return "?";
}

StopRule::StopRule(const std::vector<int>& ids) {
  for (int id : ids)
    if (id >= 0 && std::find(ids_.begin(), ids_.end(), id) == ids_.end()) ids_.push_back(id);
}

bool StopRule::stops(std::int64_t id) const {
  return std::find(ids_.begin(), ids_.end(), id) != ids_.end();
}

std::string completion_json(const Completion& c, bool show_ids) {
  nlohmann::ordered_json j;
  j["prompt"] = c.prompt;
  j["completion"] = c.text;
  j["tokens"] = c.ids.size();
  j["stop"] = stop_reason_name(c.stop);
  if (show_ids) {
    j["prompt_ids"] = c.prompt_ids;
    j["ids"] = c.ids;
  }
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string generate_summary(std::size_t prompts, std::int64_t tokens, double seconds) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "[generate] prompts=%zu tokens=%lld seconds=%.3f tokens_per_s=%.1f", prompts,
                static_cast<long long>(tokens), seconds,
                seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0);
  return buf;
}

}  // namespace wireup::train::generate
