// libFuzzer target: manifest.json. Only returns or throws InputError, and a
// manifest it accepts serialises to text that parses to the same manifest.
#include "fuzz_common.hpp"
#include "wireup/data/manifest.hpp"

using namespace wireup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  fuzz::expect_clean([&] {
    const auto m = data::parse_manifest(in, "manifest.json");
    if (!(data::parse_manifest(data::manifest_to_json(m), "again.json") == m)) __builtin_trap();
  });
  return 0;
}
