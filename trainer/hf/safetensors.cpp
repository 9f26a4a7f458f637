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

constexpr std::uint64_t kMaxHeader = 100u << 20;  // the reference implementation's limit
constexpr std::size_t kBlock = 1u << 20;          // elements converted at a time

}  // namespace

std::uint64_t TensorEntry::numel() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::size_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

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
  fd_ = io::open_file(path_, O_RDONLY);
  {
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) io::throw_errno(path_, "stat");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    std::uint64_t n = 0;
    if (size < 8 || ::pread(fd_.get(), &n, 8, 0) != 8)
      throw InputError(name + ": not a safetensors file (shorter than its 8-byte header length)");
    if (n < 2 || n > kMaxHeader || n > size - 8)
      throw InputError(name + ": not a safetensors file (header length " + std::to_string(n) +
                       " for a file of " + std::to_string(size) + " bytes)");
    std::string text(static_cast<std::size_t>(n), '\0');
    if (::pread(fd_.get(), text.data(), text.size(), 8) != static_cast<ssize_t>(text.size()))
      io::throw_errno(path_, "read header");
    data_start_ = 8 + n;
    const std::uint64_t data_size = size - data_start_;
    json header;
    try {
      header = json::parse(text);
    } catch (const std::exception& e) {
      throw InputError(name + ": not a safetensors file (header is not JSON: " + e.what() + ")");
    }
    if (!header.is_object()) throw InputError(name + ": safetensors header is not a JSON object");
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        if (!it->is_object()) throw InputError(name + ": __metadata__ is not an object");
        for (auto m = it->begin(); m != it->end(); ++m)
          if (m->is_string()) metadata_[m.key()] = m->get<std::string>();
        continue;
      }
      TensorEntry e;
      e.name = it.key();
      try {
        e.dtype = it->at("dtype").get<std::string>();
        e.shape = it->at("shape").get<std::vector<std::int64_t>>();
        const auto off = it->at("data_offsets").get<std::vector<std::uint64_t>>();
        if (off.size() != 2) throw InputError("data_offsets is not [begin, end]");
        e.begin = off[0];
        e.end = off[1];
      } catch (const InputError& err) {
        throw InputError(name + ": tensor " + e.name + ": " + err.what());
      } catch (const std::exception& err) {
        throw InputError(name + ": tensor " + e.name + ": bad header entry (" + err.what() + ")");
      }
      for (auto d : e.shape)
        if (d < 0) throw InputError(name + ": tensor " + e.name + ": negative dimension");
      if (e.end < e.begin || e.end > data_size)
        throw InputError(name + ": tensor " + e.name + ": data [" + std::to_string(e.begin) + ", " +
                         std::to_string(e.end) + ") lies outside the file's " +
                         std::to_string(data_size) + " data bytes (truncated?)");
      const std::size_t es = dtype_size(e.dtype);
      if (es != 0 && e.end - e.begin != e.numel() * es)
        throw InputError(name + ": tensor " + e.name + ": " + std::to_string(e.end - e.begin) +
                         " bytes for " + std::to_string(e.numel()) + " " + e.dtype + " elements");
      index_[e.name] = entries_.size();
      entries_.push_back(std::move(e));
    }
  }
}

Reader::~Reader() = default;

const TensorEntry* Reader::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
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
