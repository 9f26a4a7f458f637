#include "line_reader.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "wireup/error.hpp"

namespace wireup::prep {

LineReader::LineReader(const std::filesystem::path& path)
    : path_(path), buf_(std::size_t{1} << 20) {
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr)
    throw InputError(path.string() +
                     ": cannot open: " + (errno != 0 ? std::strerror(errno) : "out of memory"));
  gzbuffer(f, 1 << 18);
  gz_ = f;
}

LineReader::~LineReader() {
  if (gz_ != nullptr) gzclose_r(static_cast<gzFile>(gz_));
}

std::uint64_t LineReader::raw_offset() const {
  const auto off = gzoffset(static_cast<gzFile>(gz_));
  return off < 0 ? 0 : static_cast<std::uint64_t>(off);
}

bool LineReader::refill() {
  if (eof_) return false;
  const int n = gzread(static_cast<gzFile>(gz_), buf_.data(), static_cast<unsigned>(buf_.size()));
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    throw InputError(path_.string() + ": read error after line " + std::to_string(line_) + ": " +
                     (code == Z_ERRNO ? std::strerror(errno) : msg));
  }
  if (n == 0) {
    // gzread returns 0 at a clean end; a truncated gzip stream leaves an error.
    int code = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &code);
    if (code != Z_OK && code != Z_STREAM_END)
      throw InputError(path_.string() + ": gzip data error after line " + std::to_string(line_) +
                       ": " + msg + " (truncated download?)");
    eof_ = true;
    return false;
  }
  pos_ = 0;
  end_ = static_cast<std::size_t>(n);
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
