#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hf/safetensors_header.hpp"
#include "wireup/file_io.hpp"

// A small reader and writer of the safetensors format (Hugging Face):
//   8 bytes   little-endian u64 N, the header's length
//   N bytes   JSON object: name -> {"dtype", "shape", "data_offsets": [begin, end)},
//             plus an optional "__metadata__" string map; padded with spaces
//   the rest  raw little-endian tensor data, offsets relative to its start
// Plain C++ (no LibTorch): values go in and out as fp32 arrays.
namespace wireup::train::safetensors {

// Writes one file: every tensor declared up front (the header comes first),
// then their data in that order. The file appears under its final name only
// at commit() (temporary name, fsync, rename, fsync of the directory).
class Writer {
 public:
  // `dtype` of each entry: "F32", "BF16" or "F16"; offsets are filled in here.
  Writer(std::filesystem::path path, std::vector<TensorEntry> entries,
         const std::map<std::string, std::string>& metadata);
  ~Writer();  // without commit(): removes the temporary file
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // The data of the next declared tensor (must be `name`), from fp32 values
  // (rounded to nearest even for BF16/F16).
  void write_next(const std::string& name, const float* values, std::uint64_t numel);
  void commit();
  std::uint64_t bytes_written() const { return written_; }

 private:
  void put(const void* data, std::size_t bytes);
  std::filesystem::path path_, tmp_;
  std::vector<TensorEntry> entries_;
  std::size_t next_ = 0;
  io::Fd fd_;
  std::uint64_t written_ = 0;
  bool committed_ = false;
};

// Reads a file's header once (a regular file, never waited on; the header
// checked by parse_header: its length, nesting, names, shapes, dtypes, and
// data that tiles the data section exactly); tensor data on demand with
// pread. Every error names the file.
class Reader {
 public:
  explicit Reader(std::filesystem::path path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const std::vector<TensorEntry>& tensors() const { return entries_; }
  const TensorEntry* find(const std::string& name) const;  // nullptr if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // A tensor's values as fp32 (F32, BF16 and F16 are converted exactly);
  // `out` holds numel() floats. Other dtypes: InputError.
  void read_f32(const TensorEntry& t, float* out) const;
  // The first min(max_bytes, its size) bytes of a tensor's data, as stored.
  std::string read_head(const TensorEntry& t, std::uint64_t max_bytes) const;

 private:
  std::filesystem::path path_;
  io::Fd fd_;
  std::uint64_t data_start_ = 0;
  std::vector<TensorEntry> entries_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace wireup::train::safetensors
