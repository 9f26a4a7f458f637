#include "packed_rows.hpp"

#include <cstring>

namespace wireup::data::detail {

void PackedRowReader::read(const std::vector<std::uint64_t>& windows, unsigned char* tokens,
                           std::uint8_t* mask, std::int32_t* segments) const {
  for (std::size_t r = 0; r < windows.size(); ++r) {
    unsigned char* row = tokens + r * cols_ * token_bytes_;
    std::uint8_t* row_mask = mask + r * cols_;
    std::int32_t* row_seg = segments + r * cols_;
    std::uint64_t at = 0;
    std::int32_t seg = 0;
    for (const PackPiece& p : plan_.window(windows[r])) {
      set_.read_raw(p.first, p.length, row + at * token_bytes_);
      set_.read_mask(p.first, p.length, row_mask + at);
      for (std::uint64_t k = 0; k < p.length; ++k) row_seg[at + k] = seg;
      at += p.length;
      ++seg;
    }
    for (; at < cols_; ++at) {  // padding: not trained, a segment of its own
      for (unsigned b = 0; b < token_bytes_; ++b)
        row[at * token_bytes_ + b] = static_cast<unsigned char>(pad_id_ >> (8 * b));
      row_mask[at] = 0;
      row_seg[at] = seg;
    }
  }
}

void PackedRowReader::readahead(std::uint64_t w) const {
  for (const PackPiece& p : plan_.window(w)) set_.readahead(p.first, p.length);
}

}  // namespace wireup::data::detail
