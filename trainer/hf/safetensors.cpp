#include "hf/safetensors.hpp"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wireup::train::safetensors {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this code copies it as is");

namespace {

constexpr std::size_t kBlock = 1u << 20;  // elements converted at a time

}  // namespace

// ---------------------------------------------------------------- writer

Writer::Writer(fs::path path, std::vector<TensorEntry> entries,
               const std::map<std::string, std::string>& metadata)
    : path_(std::move(path)), entries_(std::move(entries)) {
  tmp_ = path_.parent_path() / ("." + path_.filename().string() + ".tmp");
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t off = 0;
  for (auto& e : entries_) {
    if (e.dtype != "F32" && e.dtype != "BF16" && e.dtype != "F16")
      throw InputError(path_.string() + ": cannot write dtype " + e.dtype);
    if (e.name.empty() || e.name == "__metadata__" || header.contains(e.name))
      throw InputError(path_.string() + ": bad or repeated tensor name '" + e.name + "'");
    e.begin = off;
    e.end = off + e.numel() * dtype_size(e.dtype);
    off = e.end;
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {e.begin, e.end}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  fd_ = io::open_file(tmp_, O_WRONLY | O_CREAT | O_TRUNC);
  const std::uint64_t n = text.size();
  put(&n, sizeof n);
  put(text.data(), text.size());
}

Writer::~Writer() {
  fd_ = io::Fd();
  if (!committed_) {
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

void Writer::put(const void* data, std::size_t bytes) {
  io::write_all(fd_.get(), data, bytes, tmp_);
  written_ += bytes;
}

void Writer::write_next(const std::string& name, const float* values, std::uint64_t numel) {
  if (next_ >= entries_.size() || entries_[next_].name != name)
    throw std::logic_error("safetensors::Writer: " + name + " written out of order");
  const TensorEntry& e = entries_[next_++];
  if (numel != e.numel())
    throw std::logic_error("safetensors::Writer: " + name + ": " + std::to_string(numel) +
                           " values for " + std::to_string(e.numel()) + " elements");
  if (e.dtype == "F32") {
    put(values, numel * sizeof(float));
    return;
  }
  std::vector<std::uint16_t> buf;
  for (std::uint64_t at = 0; at < numel; at += kBlock) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, numel - at));
    buf.resize(n);
    if (e.dtype == "BF16") {
      for (std::size_t i = 0; i < n; ++i) buf[i] = c10::BFloat16(values[at + i]).x;
    } else {
      for (std::size_t i = 0; i < n; ++i) buf[i] = c10::Half(values[at + i]).x;
    }
    put(buf.data(), n * sizeof(std::uint16_t));
  }
}

void Writer::commit() {
  if (next_ != entries_.size())
    throw std::logic_error("safetensors::Writer: commit with " +
                           std::to_string(entries_.size() - next_) + " tensors unwritten");
  io::fsync_fd(fd_.get(), tmp_);
  fd_ = io::Fd();
  io::rename_durably(tmp_, path_);
  committed_ = true;
}

// ---------------------------------------------------------------- reader

Reader::Reader(fs::path path) : path_(std::move(path)) {
  const std::string name = path_.string();
  // A regular file of any size (the data section is read in parts); the
  // header's length is checked against the file before anything is allocated.
  io::RegularFile f = io::open_regular(path_, UINT64_MAX);
  std::uint64_t n = 0;
  if (f.size >= 8) io::pread_all(f.fd.get(), &n, 8, 0, path_);
  check_header_length(n, f.size, name);
  std::string text(static_cast<std::size_t>(n), '\0');
  io::pread_all(f.fd.get(), text.data(), text.size(), 8, path_);
  data_start_ = 8 + n;
  Header header = parse_header(text, f.size - data_start_, name);
  entries_ = std::move(header.tensors);
  metadata_ = std::move(header.metadata);
  for (std::size_t i = 0; i < entries_.size(); ++i) index_[entries_[i].name] = i;
  fd_ = std::move(f.fd);
}

Reader::~Reader() = default;

const TensorEntry* Reader::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

std::string Reader::read_head(const TensorEntry& t, std::uint64_t max_bytes) const {
  std::string bytes(static_cast<std::size_t>(std::min(max_bytes, t.end - t.begin)), '\0');
  io::pread_all(fd_.get(), bytes.data(), bytes.size(), data_start_ + t.begin, path_);
  return bytes;
}

void Reader::read_f32(const TensorEntry& t, float* out) const {
  const std::size_t es = dtype_size(t.dtype);
  if (t.dtype != "F32" && t.dtype != "BF16" && t.dtype != "F16")
    throw InputError(path_.string() + ": tensor " + t.name + " has dtype " + t.dtype +
                     " (F32, BF16 or F16 expected)");
  auto read_at = [&](void* dst, std::size_t bytes, std::uint64_t off) {
    io::pread_all(fd_.get(), dst, bytes, data_start_ + off, path_);
  };
  const std::uint64_t numel = t.numel();
  if (t.dtype == "F32") {
    read_at(out, numel * es, t.begin);
    return;
  }
  std::vector<std::uint16_t> buf;
  for (std::uint64_t at = 0; at < numel; at += kBlock) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, numel - at));
    buf.resize(n);
    read_at(buf.data(), n * 2, t.begin + at * 2);
    if (t.dtype == "BF16") {
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t bits = static_cast<std::uint32_t>(buf[i]) << 16;
        std::memcpy(out + at + i, &bits, 4);
      }
    } else {
      for (std::size_t i = 0; i < n; ++i)
        out[at + i] = static_cast<float>(c10::Half(buf[i], c10::Half::from_bits()));
    }
  }
}

}  // namespace wireup::train::safetensors
