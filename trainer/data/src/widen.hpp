#pragma once
#include <cstdint>

// Little-endian uint16/uint32 tokens to the loader's row types. Internal to
// wireup_data: the hot loop of every batch, so it has an AVX2 path (picked at
// run time on x86-64) besides the portable one.
namespace wireup::data::detail {

void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int64_t* out);
void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int32_t* out);
void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::uint32_t* out);

}  // namespace wireup::data::detail
