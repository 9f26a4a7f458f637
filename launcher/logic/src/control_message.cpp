#include "wireup/control_message.hpp"

#include "wireup/text.hpp"

namespace wireup {

namespace {
constexpr std::size_t kMaxLine = 4096;
}

std::string format_message(const std::string& verb, std::vector<std::uint32_t> args) {
  std::string s = verb;
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
    ControlMessage m{words[0], {}};
    for (std::size_t i = 1; i < words.size(); ++i)
      m.args.push_back(static_cast<std::uint32_t>(parse_uint(words[i], UINT32_MAX).value_or(0)));
    out.push_back(std::move(m));
  }
  return buf_.size() <= kMaxLine;
}

}  // namespace wireup
