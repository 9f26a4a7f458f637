#pragma once
#include <cstdint>

// Little-endian uint16/uint32 tokens to the loader's row types. Internal to
// wireup_data: the hot loop of every batch, so it has an AVX2 path (picked at
// run time on x86-64) besides the portable one.
namespace wireup::data::detail {

void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int64_t* out);
void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int32_t* out);
void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::uint32_t* out);

// One loader row: widen (or, for unsigned char, copy as stored) `count`
// tokens at `src` into `out`, and meanwhile pull a later row (`ahead`,
// `count` tokens as well; null for none) into L2, one line per 64 bytes of
// `src` read. Spread through the copy, the row ahead's DRAM reads stay in
// flight while this row's loads and stores run, instead of a burst that
// fills the miss buffers the copy needs.
void copy_row(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int64_t* out,
              const unsigned char* ahead);
void copy_row(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int32_t* out,
              const unsigned char* ahead);
void copy_row(const unsigned char* src, unsigned src_bytes, std::uint64_t count,
              unsigned char* out, const unsigned char* ahead);

}  // namespace wireup::data::detail
