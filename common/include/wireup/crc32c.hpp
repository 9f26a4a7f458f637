#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace wireup {

// CRC-32C (Castagnoli, the polynomial of iSCSI, ext4 and SSE4.2's crc32
// instruction), zlib-style: crc32c_extend(0, "123456789", 9) == 0xE3069283,
// and extending by A then B equals extending by A+B. The SSE4.2 instruction
// where the CPU has it, a table otherwise; both give the same values.
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size);
// The table alone, whatever the CPU: for tests that compare the two.
std::uint32_t crc32c_extend_portable(std::uint32_t crc, const void* data, std::size_t size);

// Extends four CRCs at once, crc[k] over lane[k][0, size): four independent
// chains the CPU overlaps, about three times one chain's speed.
void crc32c_extend4(std::uint32_t crc[4], const char* const lane[4], std::size_t size);

// The memory snapshots' checksum of SIZE bytes: the CRC-32C of each quarter,
// 32 lowercase hex digits, quarter 0 first. Quarters 0..2 are
// quarter_bytes(SIZE) long, a multiple of 8; quarter 3 holds the rest.
// Each value is a plain CRC-32C of its byte range, so any CRC-32C tool checks it.
std::size_t crc32c_quarter_bytes(std::size_t size);
std::string crc32c_quarters_hex(const void* data, std::size_t size);
// The same checksum of SIZE bytes handed over in pieces of at most `chunk`
// bytes of each quarter at a time: read(lane, offset, bytes) returns the
// bytes [offset, offset + bytes), valid until lane `lane` (0..3) is read again.
using QuarterReader = std::function<const char*(int lane, std::uint64_t offset, std::size_t bytes)>;
std::string crc32c_quarters_hex(std::uint64_t size, std::size_t chunk, const QuarterReader& read);
// The four values as crc32c_quarters_hex prints them.
std::string crc32c_quarters_hex(const std::uint32_t crc[4]);
bool is_crc32c_quarters_hex(const std::string& s);

}  // namespace wireup
