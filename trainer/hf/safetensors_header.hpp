#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// The text of a safetensors file and of a model.safetensors.index.json,
// checked as strictly as the reference implementation reads them (no LibTorch:
// unit-tested and fuzzed on its own). Every error is an InputError starting
// with the file's name and saying what was expected.
namespace wireup::train::safetensors {

struct TensorEntry {
  std::string name;
  std::string dtype;  // "F32", "BF16", "F16", ... as in the file
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte range in the data section
  std::uint64_t numel() const;
};

// Bytes per element of a dtype name; 0 for one this code does not know.
std::size_t dtype_size(const std::string& dtype);

// The most header bytes read (the reference implementation's limit), the
// deepest nesting (the format has 3 levels: header, tensor, shape) and the
// most dimensions of a shape. Parsing holds at most one tensor's JSON at a
// time: memory is the header's text plus its entries, under 5 times the
// header's length.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;
constexpr int kMaxDepth = 3;
constexpr std::size_t kMaxDims = 64;

// The header length N (the file's first 8 bytes) of a file of `file_size`
// bytes: 2 <= N <= kMaxHeaderBytes and 8 + N <= file_size, else InputError.
void check_header_length(std::uint64_t n, std::uint64_t file_size, const std::string& name);

struct Header {
  std::vector<TensorEntry> tensors;  // in the order of their data
  std::map<std::string, std::string> metadata;
};

// The JSON header of a file whose data section has `data_size` bytes. Refused:
// text that is not one JSON object; nesting deeper than kMaxDepth; a name given
// twice (anywhere); a tensor that is not {"dtype", "shape", "data_offsets"}; an
// unknown dtype; a shape that is not non-negative integers (64.5 is refused),
// or whose element or byte count passes 2^64; data_offsets that are not
// [begin, end] with end - begin the tensor's bytes; tensors whose data overlap
// or leave a gap, or do not end exactly at the data section's end; a
// __metadata__ that is not an object of strings (the reference's rule).
Header parse_header(std::string_view text, std::uint64_t data_size, const std::string& name);

// model.safetensors.index.json: its weight_map, tensor -> file. Refused: not a
// JSON object, no weight_map object, a tensor named twice (a tensor in two
// shards), a value that is not a file name in the same directory (a string,
// not empty, no '/', not . or ..), nesting deeper than 8, more than
// kMaxIndexValues values.
std::map<std::string, std::string> parse_index(std::string_view text, const std::string& name);
// The most bytes of an index read (Llama 3.1 405B's is 60 KB) and JSON values
// in it (checked before the parse: a tree under ~100 MB).
constexpr std::uint64_t kMaxIndexBytes = 64ull << 20;
constexpr std::uint64_t kMaxIndexValues = 1ull << 20;

}  // namespace wireup::train::safetensors
