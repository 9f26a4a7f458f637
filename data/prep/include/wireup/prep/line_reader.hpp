#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace wireup::prep {

class InputStream;

// Lines of a plain, gzip'd or zstd-compressed file (see InputStream: chosen
// from the bytes). Strips "\n" and a "\r" before it.
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& path);  // InputError if unreadable
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line; InputError naming the file and line when it is longer
  // than `max_bytes` (read no further than that).
  bool next(std::string& line, std::size_t max_bytes = SIZE_MAX);
  std::uint64_t line_number() const { return line_; }  // of the last line returned, 1-based
  std::uint64_t raw_offset() const;                    // bytes consumed on disk, for progress

 private:
  bool refill();

  std::filesystem::path path_;
  std::unique_ptr<InputStream> in_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::uint64_t line_ = 0;
};

}  // namespace wireup::prep
