// libFuzzer target: a safetensors file's header (8-byte length, JSON, data
// section) read as safetensors::Reader reads it, and, when the first byte is
// '{', the same bytes as a model.safetensors.index.json. Only returns or throws
// InputError; an accepted header's tensors tile its data section exactly.
#include <cstring>

#include "fuzz_common.hpp"
#include "hf/safetensors_header.hpp"

using namespace wireup;
namespace st = wireup::train::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  if (size > 0 && data[0] == '{') {
    fuzz::expect_clean([&] { st::parse_index(in, "model.safetensors.index.json"); });
    return 0;
  }
  fuzz::expect_clean([&] {
    std::uint64_t n = 0;
    if (size >= 8) std::memcpy(&n, data, 8);
    st::check_header_length(n, size, "model.safetensors");
    const std::uint64_t data_size = size - 8 - n;
    const auto h =
        st::parse_header(std::string_view(in).substr(8, n), data_size, "model.safetensors");
    std::uint64_t at = 0;
    for (const auto& t : h.tensors) {
      if (t.begin != at || t.end - t.begin != t.numel() * st::dtype_size(t.dtype)) __builtin_trap();
      at = t.end;
    }
    if (at != data_size) __builtin_trap();
  });
  return 0;
}
