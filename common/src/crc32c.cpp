#include "wireup/crc32c.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace wireup {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78;  // 0x1EDC6F41, bits reversed

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? (c >> 1) ^ kPolynomial : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<std::uint32_t, 256> kTable = make_table();

// The raw register (no inversions) over bytes, by table.
std::uint32_t table_bytes(std::uint32_t c, const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xFFU] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2") != 0;
  return yes;
}

__attribute__((target("sse4.2"))) std::uint32_t sse_bytes(std::uint32_t c, const unsigned char* p,
                                                          std::size_t n) {
  std::uint64_t c64 = c;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, p + i, 8);
    c64 = _mm_crc32_u64(c64, v);
  }
  auto c32 = static_cast<std::uint32_t>(c64);
  for (; i < n; ++i) c32 = _mm_crc32_u8(c32, p[i]);
  return c32;
}

__attribute__((target("sse4.2"))) void sse_lanes(std::uint32_t c[4], const char* const lane[4],
                                                 std::size_t n) {
  std::uint64_t c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v0 = 0, v1 = 0, v2 = 0, v3 = 0;
    std::memcpy(&v0, lane[0] + i, 8);
    std::memcpy(&v1, lane[1] + i, 8);
    std::memcpy(&v2, lane[2] + i, 8);
    std::memcpy(&v3, lane[3] + i, 8);
    c0 = _mm_crc32_u64(c0, v0);
    c1 = _mm_crc32_u64(c1, v1);
    c2 = _mm_crc32_u64(c2, v2);
    c3 = _mm_crc32_u64(c3, v3);
  }
  const std::uint64_t regs[4] = {c0, c1, c2, c3};
  for (int k = 0; k < 4; ++k) {
    auto c32 = static_cast<std::uint32_t>(regs[k]);
    const auto* p = reinterpret_cast<const unsigned char*>(lane[k]);
    for (std::size_t j = i; j < n; ++j) c32 = _mm_crc32_u8(c32, p[j]);
    c[k] = c32;
  }
}
#endif

std::uint32_t raw_bytes(std::uint32_t c, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (have_sse42()) return sse_bytes(c, p, n);
#endif
  return table_bytes(c, p, n);
}

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size) {
  return ~raw_bytes(~crc, data, size);
}

std::uint32_t crc32c_extend_portable(std::uint32_t crc, const void* data, std::size_t size) {
  return ~table_bytes(~crc, static_cast<const unsigned char*>(data), size);
}

void crc32c_extend4(std::uint32_t crc[4], const char* const lane[4], std::size_t size) {
#if defined(__x86_64__)
  if (have_sse42()) {
    std::uint32_t raw[4] = {~crc[0], ~crc[1], ~crc[2], ~crc[3]};
    sse_lanes(raw, lane, size);
    for (int k = 0; k < 4; ++k) crc[k] = ~raw[k];
    return;
  }
#endif
  for (int k = 0; k < 4; ++k) crc[k] = crc32c_extend(crc[k], lane[k], size);
}

std::size_t crc32c_quarter_bytes(std::size_t size) { return size / 32 * 8; }

std::string crc32c_quarters_hex(const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  return crc32c_quarters_hex(size, std::max<std::size_t>(crc32c_quarter_bytes(size), 1),
                             [p](int, std::uint64_t offset, std::size_t) { return p + offset; });
}

std::string crc32c_quarters_hex(std::uint64_t size, std::size_t chunk, const QuarterReader& read) {
  const std::uint64_t q = crc32c_quarter_bytes(size);
  chunk = std::max<std::size_t>(chunk, 1);
  std::uint32_t crc[4] = {0, 0, 0, 0};
  for (std::uint64_t off = 0; off < q;) {  // quarter k starts at k * q
    const std::size_t n = std::min<std::uint64_t>(chunk, q - off);
    const char* lanes[4];
    for (int k = 0; k < 4; ++k) lanes[k] = read(k, static_cast<std::uint64_t>(k) * q + off, n);
    crc32c_extend4(crc, lanes, n);
    off += n;
  }
  const std::size_t tail = size - 4 * q;  // quarter 3's rest, under 32 bytes
  if (tail > 0) crc[3] = crc32c_extend(crc[3], read(3, 4 * q, tail), tail);
  return crc32c_quarters_hex(crc);
}

std::string crc32c_quarters_hex(const std::uint32_t crc[4]) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", crc[0], crc[1], crc[2], crc[3]);
  return buf;
}

bool is_crc32c_quarters_hex(const std::string& s) {
  if (s.size() != 32) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace wireup
