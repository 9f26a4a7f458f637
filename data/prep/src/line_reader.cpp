#include "wireup/prep/line_reader.hpp"

#include <cstring>
#include <string>

#include "wireup/error.hpp"
#include "wireup/prep/input_stream.hpp"

namespace wireup::prep {

LineReader::LineReader(const std::filesystem::path& path)
    : path_(path), in_(InputStream::open(path)), buf_(std::size_t{1} << 20) {}

LineReader::~LineReader() = default;

std::uint64_t LineReader::raw_offset() const { return in_->raw_offset(); }

bool LineReader::refill() {
  if (eof_) return false;
  const std::size_t n = in_->read(buf_.data(), buf_.size());
  if (n == 0) {
    eof_ = true;
    return false;
  }
  pos_ = 0;
  end_ = n;
  return true;
}

bool LineReader::next(std::string& line, std::size_t max_bytes) {
  line.clear();
  bool any = false;
  for (;;) {
    if (pos_ == end_ && !refill()) break;
    any = true;
    const char* start = buf_.data() + pos_;
    const auto* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
    if (nl != nullptr) {
      line.append(start, static_cast<std::size_t>(nl - start));
      pos_ += static_cast<std::size_t>(nl - start) + 1;
      break;
    }
    line.append(start, end_ - pos_);
    pos_ = end_;
    if (line.size() > max_bytes)
      throw InputError(path_.string() + ":" + std::to_string(line_ + 1) + ": a line longer than " +
                       std::to_string(max_bytes) +
                       " bytes (--max-doc-bytes); split the input or raise --max-doc-bytes");
  }
  if (!any) return false;
  if (line.size() > max_bytes)
    throw InputError(path_.string() + ":" + std::to_string(line_ + 1) + ": a line longer than " +
                     std::to_string(max_bytes) +
                     " bytes (--max-doc-bytes); split the input or raise --max-doc-bytes");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_;
  return true;
}

}  // namespace wireup::prep
