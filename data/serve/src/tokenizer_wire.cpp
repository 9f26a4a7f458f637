#include "wireup/serve/tokenizer_wire.hpp"

#include <stdexcept>

namespace wireup::serve {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::string frame(char tag, const std::string& payload) {
  if (payload.size() > kMaxPayload)
    throw std::invalid_argument("tokenizer frame of " + std::to_string(payload.size()) +
                                " bytes: the most is " + std::to_string(kMaxPayload));
  std::string out(1, tag);
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  return out + payload;
}

std::optional<std::uint32_t> payload_length(const char* header) {
  const std::uint32_t n = get_u32(header + 1);
  if (n > kMaxPayload) return std::nullopt;
  return n;
}

std::string ids_payload(const std::vector<int>& ids) {
  std::string out;
  out.reserve(ids.size() * 4);
  for (const int id : ids) put_u32(out, static_cast<std::uint32_t>(id));
  return out;
}

std::vector<int> ids_from_payload(const std::string& payload) {
  if (payload.size() % 4 != 0)
    throw std::invalid_argument("tokenizer frame: " + std::to_string(payload.size()) +
                                " bytes of ids, not a multiple of 4");
  std::vector<int> ids(payload.size() / 4);
  for (std::size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int>(get_u32(payload.data() + 4 * i));
  return ids;
}

}  // namespace wireup::serve
