#include "wireup/control_message.hpp"

#include <array>
#include <utility>

#include "wireup/text.hpp"

namespace wireup {

namespace {

constexpr std::size_t kMaxLine = 4096;

constexpr std::array<std::pair<ControlVerb, std::string_view>, 8> kWords{{
    {ControlVerb::Hello, "HELLO"},
    {ControlVerb::Fail, "FAIL"},
    {ControlVerb::Done, "DONE"},
    {ControlVerb::Stopped, "STOPPED"},
    {ControlVerb::Stop, "STOP"},
    {ControlVerb::Start, "START"},
    {ControlVerb::Exit, "EXIT"},
    {ControlVerb::Lost, "LOST"},
}};

}  // namespace

std::string_view verb_word(ControlVerb verb) {
  for (const auto& [v, word] : kWords)
    if (v == verb) return word;
  return "?";
}

std::optional<ControlVerb> parse_verb(std::string_view word) {
  for (const auto& [v, w] : kWords)
    if (w == word) return v;
  return std::nullopt;
}

std::string format_message(ControlVerb verb, const std::vector<std::uint32_t>& args) {
  std::string s(verb_word(verb));
  for (auto a : args) s += " " + std::to_string(a);
  return s + "\n";
}

bool ControlLineReader::feed(std::string_view bytes, std::vector<ControlMessage>& out) {
  buf_.append(bytes);
  std::size_t nl;
  while ((nl = buf_.find('\n')) != std::string::npos) {
    const auto words = split(buf_.substr(0, nl), ' ');
    buf_.erase(0, nl + 1);
    if (words.empty() || words[0].empty()) continue;
    const auto verb = parse_verb(words[0]);
    if (!verb) continue;
    ControlMessage m{*verb, {}};
    for (std::size_t i = 1; i < words.size(); ++i)
      m.args.push_back(static_cast<std::uint32_t>(parse_uint(words[i], UINT32_MAX).value_or(0)));
    out.push_back(std::move(m));
  }
  return buf_.size() <= kMaxLine;
}

}  // namespace wireup
