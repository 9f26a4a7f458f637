#include "row_reader.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace wireup::data::detail {
namespace {

inline void prefetch_l2(const unsigned char* p) { __builtin_prefetch(p, 0, 1); }

// One row: `bytes` at `src` into `out`, 64 at a time, each with the same
// line of a later row (`ahead`; null: the row itself, harmless and no branch
// in the loop) pulled into L2. Spread through the copy, the later row's DRAM
// reads stay in flight while this row's loads and stores run, instead of a
// burst that fills the miss buffers the copy needs. The last byte of the
// later row may sit on a line (and page) the loop did not reach.
void copy_row(const unsigned char* src, std::uint64_t bytes, unsigned char* out,
              const unsigned char* ahead) {
  const unsigned char* pf = ahead != nullptr ? ahead : src;
  std::uint64_t at = 0;
  for (; at + 64 <= bytes; at += 64) {
    prefetch_l2(pf + at);
    std::memcpy(out + at, src + at, 64);
  }
  std::memcpy(out + at, src + at, bytes - at);
  if (bytes > 0) prefetch_l2(pf + bytes - 1);
}

#if defined(__SSE2__)
// Non-zero lanes where the tokens of `v` are `limit` or more (SSE2 has no
// unsigned compare): a saturating subtraction for 2-byte ids, a compare with
// the sign bit flipped for 4-byte ones.
inline __m128i over_u16(__m128i v, __m128i below) { return _mm_subs_epu16(v, below); }
inline __m128i over_u32(__m128i v, __m128i below_flipped) {
  return _mm_cmpgt_epi32(_mm_xor_si128(v, _mm_set1_epi32(INT32_MIN)), below_flipped);
}

// The tokens [0, count) that fill whole 64-byte blocks, checked 16 bytes an
// instruction on two independent chains; returns how many were checked.
template <__m128i (*Over)(__m128i, __m128i)>
std::size_t blocks_at_least(const unsigned char* tokens, std::size_t count, unsigned width,
                            __m128i below, bool& hit) {
  const std::size_t per_block = 64 / width;
  __m128i a = _mm_setzero_si128(), b = _mm_setzero_si128();
  std::size_t i = 0;
  for (; i + per_block <= count; i += per_block) {
    const auto* p = reinterpret_cast<const __m128i*>(tokens + i * width);
    a = _mm_or_si128(
        a, _mm_or_si128(Over(_mm_loadu_si128(p), below), Over(_mm_loadu_si128(p + 1), below)));
    b = _mm_or_si128(
        b, _mm_or_si128(Over(_mm_loadu_si128(p + 2), below), Over(_mm_loadu_si128(p + 3), below)));
  }
  const __m128i any = _mm_or_si128(a, b);
  hit = _mm_movemask_epi8(_mm_cmpeq_epi8(any, _mm_setzero_si128())) != 0xFFFF;
  return i;
}
#endif

// Whether any of `count` little-endian tokens of `width` bytes is `limit` or
// more (1 <= limit < 2^(8 * width)). With SSE2 the whole 64-byte blocks go 16
// bytes an instruction, so checking a batch costs a fraction of copying it.
bool any_id_at_least(const unsigned char* tokens, std::size_t count, unsigned width,
                     std::uint32_t limit) {
  std::size_t i = 0;
#if defined(__SSE2__)
  bool hit = false;
  i = width == 2 ? blocks_at_least<over_u16>(tokens, count, width,
                                             _mm_set1_epi16(static_cast<short>(limit - 1)), hit)
                 : blocks_at_least<over_u32>(
                       tokens, count, width,
                       _mm_set1_epi32(static_cast<int>((limit - 1) ^ 0x80000000u)), hit);
  if (hit) return true;
#endif
  for (; i < count; ++i) {
    std::uint32_t v = 0;
    for (unsigned k = width; k-- > 0;) v = v << 8 | tokens[i * width + k];
    if (v >= limit) return true;
  }
  return false;
}

}  // namespace

std::optional<std::size_t> first_id_at_least(const unsigned char* tokens, std::size_t count,
                                             unsigned width, std::uint64_t limit) {
  if (limit >= std::uint64_t{1} << (8 * width)) return std::nullopt;  // every id fits
  if (limit == 0) return count > 0 ? std::optional<std::size_t>(0) : std::nullopt;
  if (!any_id_at_least(tokens, count, width, static_cast<std::uint32_t>(limit)))
    return std::nullopt;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t v = 0;
    for (unsigned k = width; k-- > 0;) v = v << 8 | tokens[i * width + k];
    if (v >= limit) return i;
  }
  return std::nullopt;
}

RowReader::RowReader(const ShardSet& set, std::uint64_t context, unsigned token_bytes)
    : set_(set), context_(context), token_bytes_(token_bytes) {
  const char* stall = std::getenv("WIREUP_TEST_STALL_SHARD");
  if (stall == nullptr || *stall == '\0') return;
  std::uint64_t first = 0;
  for (const ShardFile& f : set.shards()) {
    const std::uint64_t n = f.header().token_count;
    if (f.path().filename() == stall) stall_lo_ = first, stall_hi_ = first + n;
    first += n;
  }
}

std::vector<std::string> RowReader::reads_in_progress() const {
  std::vector<std::string> out;
  for (const Slot& s : reading_)
    if (const std::uint64_t t = s.token.load(std::memory_order_relaxed))
      out.push_back(set_.locate(t - 1));
  return out;
}

namespace {
// A slot of `slots` for one read(), freed when it ends (also by an exception).
template <class Slots>
class ReadingSlot {
 public:
  explicit ReadingSlot(Slots& slots) {
    for (auto& s : slots) {
      std::uint64_t free = 0;
      if (s.token.compare_exchange_strong(free, 1, std::memory_order_relaxed)) {
        token_ = &s.token;
        return;
      }
    }
  }
  ~ReadingSlot() {
    if (token_ != nullptr) token_->store(0, std::memory_order_relaxed);
  }
  void set(std::uint64_t token) const {
    if (token_ != nullptr) token_->store(token + 1, std::memory_order_relaxed);
  }
  ReadingSlot(const ReadingSlot&) = delete;
  ReadingSlot& operator=(const ReadingSlot&) = delete;

 private:
  std::atomic<std::uint64_t>* token_ = nullptr;
};
}  // namespace

// Windows sit at random places, so each is a cold start for the hardware
// prefetcher and the TLB. While row i is copied, row i + kReadAhead is
// pulled into L2 line by line alongside it (copy_row): its DRAM reads and
// page walk overlap the copies of the rows between (bench/data/run.sh
// measures the rate against a sequential read). The rows ahead run on into
// the next step (see Ahead), so a batch's last rows are not cold starts.
// Rows inside one mapped shard (all but one per shard boundary) are copied
// straight from the mapping; the rest (boundary-crossing windows, pread) go
// through the ShardSet.
void RowReader::read(const std::vector<std::uint64_t>& windows, const Ahead& ahead,
                     unsigned char* out) const {
  const std::uint64_t cols = context_ + 1, bytes = row_bytes();
  const std::size_t n = windows.size();
  if (n == 0) return;
  const ReadingSlot<decltype(reading_)> slot(reading_);
  // Rows of the next step to read ahead, decided when the first is needed.
  std::optional<std::size_t> n_next;
  const auto source = [&](std::size_t i) -> const unsigned char* {
    if (i < n) return set_.mapped(windows[i] * context_, cols);
    if (!n_next) {
      const bool taken = ahead.block != Ahead::kOwn && ahead.claimed != nullptr &&
                         ahead.claimed->load(std::memory_order_relaxed) > ahead.block;
      n_next = taken ? 0 : ahead.n_next;
    }
    return i < n + *n_next ? set_.mapped(ahead.next[i - n] * context_, cols) : nullptr;
  };
  constexpr std::size_t kRing = kReadAhead + 1;  // row i's source, found kReadAhead rows earlier
  const unsigned char* ring[kRing] = {};
  for (std::size_t i = 0; i < kReadAhead; ++i) {
    ring[i] = source(i);
    if (ring[i] != nullptr) __builtin_prefetch(ring[i], 0, 1);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* src = ring[i % kRing];
    const unsigned char* later = source(i + kReadAhead);
    ring[(i + kReadAhead) % kRing] = later;
    unsigned char* row = out + i * bytes;
    const std::uint64_t first = windows[i] * context_;
    slot.set(first);
    if (first >= stall_lo_ && first < stall_hi_) {
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // WIREUP_TEST_STALL_SHARD
    }
    if (src != nullptr) {
      copy_row(src, bytes, row, later);
    } else {
      if (i + 1 < n) set_.prefetch(windows[i + 1] * context_, cols);
      set_.read_raw(windows[i] * context_, cols, row);
    }
  }
}

}  // namespace wireup::data::detail
