#include "tensorboard/event_records.hpp"

#include <cstring>

#include "wireup/crc32c.hpp"

namespace wireup::train::tensorboard {
namespace {

// Protobuf wire types.
enum WireType : unsigned { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, unsigned field, WireType type) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | type);
}

template <typename T>
void put_little_endian(std::string& out, T bits) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
}

void put_bytes(std::string& out, unsigned field, std::string_view bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Event fields 1 and 2, left out when zero (proto3 defaults).
std::string event_head(double wall_time, std::int64_t step) {
  std::string out;
  if (wall_time != 0) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &wall_time, sizeof bits);
    put_key(out, 1, kFixed64);
    put_little_endian(out, bits);
  }
  if (step != 0) {
    put_key(out, 2, kVarint);
    put_varint(out, static_cast<std::uint64_t>(step));  // int64: two's complement
  }
  return out;
}

std::string summary_value(const Scalar& s) {
  std::string out;
  if (!s.tag.empty()) put_bytes(out, 1, s.tag);
  const float value = static_cast<float>(s.value);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, 2, kFixed32);  // in a oneof: written even when 0
  put_little_endian(out, bits);
  return out;
}

}  // namespace

std::string file_version_event(double wall_time) {
  std::string out = event_head(wall_time, 0);
  put_bytes(out, 3, kFileVersion);
  return out;
}

std::string session_start_event(double wall_time, std::int64_t step) {
  std::string session_log;
  put_key(session_log, 1, kVarint);
  put_varint(session_log, 1);  // SessionLog.START
  std::string out = event_head(wall_time, step);
  put_bytes(out, 7, session_log);
  return out;
}

std::string scalars_event(double wall_time, std::int64_t step, const std::vector<Scalar>& values) {
  std::string summary;
  for (const Scalar& s : values) put_bytes(summary, 1, summary_value(s));
  std::string out = event_head(wall_time, step);
  put_bytes(out, 5, summary);
  return out;
}

std::uint32_t mask_crc(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8U; }

std::uint32_t masked_crc32c(std::string_view data) {
  return mask_crc(crc32c_extend(0, data.data(), data.size()));
}

std::string tfrecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_little_endian(out, static_cast<std::uint64_t>(data.size()));
  put_little_endian(out, masked_crc32c(std::string_view(out.data(), 8)));
  out.append(data);
  put_little_endian(out, masked_crc32c(data));
  return out;
}

}  // namespace wireup::train::tensorboard
