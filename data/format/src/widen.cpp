#include "widen.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define WIREUP_WIDEN_AVX2 1
#endif

namespace wireup::data::detail {
namespace {

// Read-ahead of a later row goes to L2 only (prefetcht2): prefetches into L1
// (prefetcht0) hold the few L1 miss buffers that the copy's own loads and
// stores need, and measured half the speed on the AMD EPYC development VM
// (random 4 KiB windows: 10 against 17 GB/s on one core).
inline void prefetch_l2(const unsigned char* p) { __builtin_prefetch(p, 0, 1); }

template <class Src, class T>
void scalar(const unsigned char* bytes, std::uint64_t count, T* out) {
  for (std::uint64_t i = 0; i < count; ++i) {
    Src v;
    std::memcpy(&v, bytes + i * sizeof(Src), sizeof(Src));
    out[i] = static_cast<T>(v);
  }
}

#ifdef WIREUP_WIDEN_AVX2
// 4.5x the scalar loop on the benchmark machine: one load and a few
// zero-extending stores per 16 tokens instead of 16 of each.
__attribute__((target("avx2"))) void u16_to_i64(const unsigned char* src, std::uint64_t n,
                                                std::int64_t* out) {
  std::uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
    const __m128i lo = _mm256_castsi256_si128(v);
    const __m128i hi = _mm256_extracti128_si256(v, 1);
    auto* o = reinterpret_cast<__m256i*>(out + i);
    _mm256_storeu_si256(o, _mm256_cvtepu16_epi64(lo));
    _mm256_storeu_si256(o + 1, _mm256_cvtepu16_epi64(_mm_srli_si128(lo, 8)));
    _mm256_storeu_si256(o + 2, _mm256_cvtepu16_epi64(hi));
    _mm256_storeu_si256(o + 3, _mm256_cvtepu16_epi64(_mm_srli_si128(hi, 8)));
  }
  scalar<std::uint16_t>(src + 2 * i, n - i, out + i);
}

template <class T>
__attribute__((target("avx2"))) void u16_to_32(const unsigned char* src, std::uint64_t n, T* out) {
  std::uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
    auto* o = reinterpret_cast<__m256i*>(out + i);
    _mm256_storeu_si256(o, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)));
    _mm256_storeu_si256(o + 1, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)));
  }
  scalar<std::uint16_t>(src + 2 * i, n - i, out + i);
}

__attribute__((target("avx2"))) void u32_to_i64(const unsigned char* src, std::uint64_t n,
                                                std::int64_t* out) {
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * i));
    auto* o = reinterpret_cast<__m256i*>(out + i);
    _mm256_storeu_si256(o, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)));
    _mm256_storeu_si256(o + 1, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)));
  }
  scalar<std::uint32_t>(src + 4 * i, n - i, out + i);
}

// The copy_row kernels: as above, 64 bytes of source per iteration, each
// with a prefetch of the same offset in a later row (`ahead`: never null
// here; prefetching cannot fault). Unrolled by hand: the compiler keeps an
// inner loop of two otherwise, which measured ~10% slower.
__attribute__((target("avx2"))) inline void u16_to_i64_x16(const unsigned char* src,
                                                          std::int64_t* out) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  const __m128i lo = _mm256_castsi256_si128(v);
  const __m128i hi = _mm256_extracti128_si256(v, 1);
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(o, _mm256_cvtepu16_epi64(lo));
  _mm256_storeu_si256(o + 1, _mm256_cvtepu16_epi64(_mm_srli_si128(lo, 8)));
  _mm256_storeu_si256(o + 2, _mm256_cvtepu16_epi64(hi));
  _mm256_storeu_si256(o + 3, _mm256_cvtepu16_epi64(_mm_srli_si128(hi, 8)));
}

__attribute__((target("avx2"))) inline void u32_to_i64_x8(const unsigned char* src,
                                                         std::int64_t* out) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(o, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)));
  _mm256_storeu_si256(o + 1, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v, 1)));
}

__attribute__((target("avx2"))) inline void u16_to_i32_x16(const unsigned char* src,
                                                          std::int32_t* out) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(o, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)));
  _mm256_storeu_si256(o + 1, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)));
}

// One row with one of the kernels above (`Half`: 32 bytes of source) and
// the plain widening for the tail.
template <class Out, unsigned SrcBytes, void (*Half)(const unsigned char*, Out*),
          void (*Tail)(const unsigned char*, std::uint64_t, Out*)>
__attribute__((target("avx2"))) void widen_row(const unsigned char* src, std::uint64_t n,
                                               Out* out, const unsigned char* ahead) {
  constexpr std::uint64_t per = 64 / SrcBytes;  // tokens per iteration
  std::uint64_t i = 0;
  for (; i + per <= n; i += per) {
    prefetch_l2(ahead + SrcBytes * i);
    Half(src + SrcBytes * i, out + i);
    Half(src + SrcBytes * i + 32, out + i + per / 2);
  }
  Tail(src + SrcBytes * i, n - i, out + i);
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}
#endif

// Portable copy_row: 64 bytes of source per prefetch.
template <class T>
void row_portable(const unsigned char* src, unsigned src_bytes, std::uint64_t count, T* out,
                  const unsigned char* ahead) {
  const std::uint64_t per_line = 64 / src_bytes;
  for (std::uint64_t i = 0; i < count; i += per_line) {
    prefetch_l2(ahead + i * src_bytes);
    widen(src + i * src_bytes, src_bytes, std::min(per_line, count - i), out + i);
  }
}

}  // namespace

// Without a row ahead the kernels prefetch the row itself: harmless, and
// no branch in the loop. The last byte of the row ahead may sit on a line
// (and page) the loop did not reach: it is prefetched at the end.
void copy_row(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int64_t* out,
              const unsigned char* ahead) {
  const unsigned char* pf = ahead != nullptr ? ahead : src;
#ifdef WIREUP_WIDEN_AVX2
  if (have_avx2()) {
    if (src_bytes == 2)
      widen_row<std::int64_t, 2, u16_to_i64_x16, u16_to_i64>(src, count, out, pf);
    else
      widen_row<std::int64_t, 4, u32_to_i64_x8, u32_to_i64>(src, count, out, pf);
  } else {
    row_portable(src, src_bytes, count, out, pf);
  }
#else
  row_portable(src, src_bytes, count, out, pf);
#endif
  if (count > 0) prefetch_l2(pf + count * src_bytes - 1);
}

void copy_row(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int32_t* out,
              const unsigned char* ahead) {
  if (src_bytes == 4)  // ids < 2^31: a copy, as widen() does
    return copy_row(src, 4, count, reinterpret_cast<unsigned char*>(out), ahead);
  const unsigned char* pf = ahead != nullptr ? ahead : src;
#ifdef WIREUP_WIDEN_AVX2
  if (have_avx2()) widen_row<std::int32_t, 2, u16_to_i32_x16, u16_to_32>(src, count, out, pf);
  else row_portable(src, src_bytes, count, out, pf);
#else
  row_portable(src, src_bytes, count, out, pf);
#endif
  if (count > 0) prefetch_l2(pf + count * src_bytes - 1);
}

void copy_row(const unsigned char* src, unsigned src_bytes, std::uint64_t count,
              unsigned char* out, const unsigned char* ahead) {
  // 64 bytes at a time (vector moves), each with the same line of the row ahead.
  const unsigned char* pf = ahead != nullptr ? ahead : src;
  const std::uint64_t bytes = count * src_bytes;
  std::uint64_t at = 0;
  for (; at + 64 <= bytes; at += 64) {
    prefetch_l2(pf + at);
    std::memcpy(out + at, src + at, 64);
  }
  std::memcpy(out + at, src + at, bytes - at);
  if (bytes > 0) prefetch_l2(pf + bytes - 1);
}

void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int64_t* out) {
#ifdef WIREUP_WIDEN_AVX2
  if (have_avx2()) {
    if (src_bytes == 2) u16_to_i64(src, count, out);
    else u32_to_i64(src, count, out);
    return;
  }
#endif
  if (src_bytes == 2) scalar<std::uint16_t>(src, count, out);
  else scalar<std::uint32_t>(src, count, out);
}

void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::int32_t* out) {
  if (src_bytes == 4) {
    std::memcpy(out, src, count * 4);  // ids < 2^31: same bits
    return;
  }
#ifdef WIREUP_WIDEN_AVX2
  if (have_avx2()) return u16_to_32(src, count, out);
#endif
  scalar<std::uint16_t>(src, count, out);
}

void widen(const unsigned char* src, unsigned src_bytes, std::uint64_t count, std::uint32_t* out) {
  if (src_bytes == 4) {
    std::memcpy(out, src, count * 4);
    return;
  }
#ifdef WIREUP_WIDEN_AVX2
  if (have_avx2()) return u16_to_32(src, count, out);
#endif
  scalar<std::uint16_t>(src, count, out);
}

}  // namespace wireup::data::detail
